/**
 * Kafka transactions across the nodes of a cluster (docs/cluster.md, "Kafka transactions"), with
 * Debian's librdkafka (python3-confluent-kafka): 3 etcd members, 3 nodes in objects mode, a
 * 6-partition topic led 2/2/2, so every transaction writes to partitions on all three nodes while
 * its coordinator is one of them.
 * - Committed transactions are seen by read_committed consumers, each record once; aborted ones
 *   never; read_uncommitted consumers see every record and no marker.
 * - The coordinator SIGKILLed after its decision (PrepareCommit) and before any marker (the
 *   participants held back by the test fault hook): the producer's commit completes through the
 *   next coordinator, and the transaction is committed on every partition, once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { tempDir } from '../helpers/node-process';
import { GroupWire } from '../kafka/group-wire-client';
import { python, runPythonDriver } from '../kafka/python-process';
import { ObjectsCluster, until } from './objects-cluster';

jest.setTimeout(240_000);

const DRIVER = 'confluent_driver.py';
const TOPIC = 'txc';
const PARTITIONS = 6;

let c: ObjectsCluster;
let faults: string;

beforeAll(async () => {
  const dir = tempDir('svc-txn-cluster-');
  faults = path.join(dir, 'faults');
  const objects = path.join(dir, 'objects');
  fs.mkdirSync(objects);
  c = await ObjectsCluster.start(['--node-lease-ttl', '3'], { url: `file:${objects}`, env: { SVC_TEST_FAULTS_FILE: faults } });
  const admin = new Kafka({ clientId: 'txc', brokers: [...c.nodes.values()].map((n) => n.kafka), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    const md = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    const leaders = new Set(md.topics[0]!.partitions.map((p) => p.leader));
    expect(leaders.size).toBe(3);
  } finally {
    await admin.disconnect();
  }
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

const brokers = (): string => [...c.nodes.values()].map((n) => n.kafka).join(',');

async function read(isolation: 'read_committed' | 'read_uncommitted'): Promise<string[]> {
  const r = await python<{ records: Array<{ value: string | null }> }>(DRIVER, { op: 'read_spread', broker: brokers(), topic: TOPIC, partitions: PARTITIONS, isolation, idle: 3 }, 120_000);
  return r.records.map((x) => x.value ?? '').sort();
}

const values = (prefix: string): string[] => Array.from({ length: 12 }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);

/** The transactional id's record as the metadata store holds it. */
function txnState(txnId: string): string | null {
  const prefix = c.metadataUrl.replace(/^etcds?:\/\/[^/]+\//, '');
  const out = c.etcd.etcdctl('get', `${prefix}/k/kafka/txn/${encodeURIComponent(txnId)}`, '--print-value-only').trim();
  if (out === '') return null;
  const j = JSON.parse(out) as { state?: string; value?: { state: string } };
  return j.state ?? j.value?.state ?? null;
}

test('transactions over partitions on all 3 nodes: read_committed sees exactly the committed ones, each record once', async () => {
  const r = await python<{ outcomes: string[] }>(
    DRIVER,
    { op: 'txn_spread', broker: brokers(), topic: TOPIC, partitions: PARTITIONS, txnId: 'txc-basic', txns: [{ values: values('a'), commit: true }, { values: values('b'), commit: false }, { values: values('c'), commit: true }] },
    120_000,
  );
  expect(r.outcomes).toEqual(['committed', 'aborted', 'committed']);
  expect(await read('read_committed')).toEqual([...values('a'), ...values('c')]);
  expect(await read('read_uncommitted')).toEqual([...values('a'), ...values('b'), ...values('c')]);
  expect(txnState('txc-basic')).toBe('CompleteCommit');
});

test('the coordinator SIGKILLed between its decision and the markers: the transaction commits on every partition, once', async () => {
  const txnId = 'txc-kill';
  fs.writeFileSync(faults, 'txn-participants');
  const run = runPythonDriver(DRIVER, { op: 'txn_spread', broker: brokers(), topic: TOPIC, partitions: PARTITIONS, txnId, txns: [{ values: values('d'), commit: true }], endSeconds: 90 }, 180_000);
  try {
    await until('the commit to be decided', async () => (txnState(txnId) === 'PrepareCommit' ? true : null), 60_000, 100);
    // Decided, no marker written: read_committed consumers see none of it yet.
    expect((await read('read_committed')).filter((v) => v.startsWith('d'))).toEqual([]);
    const wire = await GroupWire.connect(c.any().kafka);
    const coordinator = (await wire.findCoordinator(3, txnId, 1)).nodeId!;
    wire.close();
    const victim = c.nodes.get(coordinator)!;
    c.nodes.delete(coordinator);
    await victim.kill();
  } finally {
    fs.rmSync(faults, { force: true });
  }
  const done = await run;
  expect(done.code).toBe(0);
  expect(JSON.parse(done.stdout.trim().split('\n').pop()!)).toEqual({ outcomes: ['committed'] });
  await until('the transaction to complete', async () => (txnState(txnId) === 'CompleteCommit' ? true : null), 60_000, 200);
  const committed = await read('read_committed');
  expect(committed.filter((v) => v.startsWith('d'))).toEqual(values('d'));
  expect(committed.filter((v) => v.startsWith('b'))).toEqual([]);
});
