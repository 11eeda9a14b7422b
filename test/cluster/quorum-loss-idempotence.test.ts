/**
 * An idempotent Kafka producer across an etcd quorum loss (docs/cluster.md, "When etcd loses its
 * quorum"; docs/errors.md, outcome `maybe_written`): 3 etcd members, 3 nodes in objects mode on a
 * `file:` store, Debian's python3-confluent-kafka (librdkafka) producing with
 * `enable.idempotence` and `acks=all` while 2 of the 3 members are stopped for 15 s and started
 * again. A produce whose group stalled may still be written: it is answered REQUEST_TIMED_OUT, so
 * librdkafka retries it with the same epoch and sequence and the retry is deduplicated. Every
 * acknowledged message must be stored exactly once, and the stream hold no value twice, in order.
 */
import { Kafka, logLevel } from 'kafkajs';
import { runPythonDriver } from '../kafka/python-process';
import { objectsClusterForFile, sleep } from './objects-cluster';
import { readAll } from './writers';

jest.setTimeout(180_000);

const c = objectsClusterForFile(['--node-lease-ttl', '3']);

interface RunResult {
  sent: number;
  acked: Array<{ value: string; offset: number | null }>;
  failed: Array<{ value: string; error: string }>;
  unflushed: number;
}

test('a librdkafka idempotent producer (acks=all) across 2 of 3 etcd members stopped for 15 s: every acknowledged message is stored exactly once, in order', async () => {
  const topic = 'qi-orders';
  const brokers = [...c.nodes.values()].map((n) => n.kafka);
  const admin = new Kafka({ clientId: 'qi', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const run = runPythonDriver('confluent_driver.py', { op: 'idempotent_run', broker: brokers.join(','), topic, prefix: 'm', seconds: 32, everyMs: 5, flushSeconds: 60, debug: 'eos,msg' }, 150_000);
  await sleep(6_000);
  await c.etcd.kill(1);
  await c.etcd.kill(2);
  try {
    await sleep(15_000);
  } finally {
    c.etcd.startMember(1);
    c.etcd.startMember(2);
  }
  await c.etcd.waitHealthy(30_000);
  const out = await run;
  if (out.code !== 0) throw new Error(`the producer failed (${out.code}):\n${out.stderr.slice(-3000)}`);
  const r = JSON.parse(out.stdout.trim().split('\n').pop()!) as RunResult;
  const stored = (await readAll(c, `/${topic}`)).map((x) => x.body ?? '');
  const index = (v: string): number => Number(v.slice(2));
  const counts = new Map<string, number>();
  for (const v of stored) counts.set(v, (counts.get(v) ?? 0) + 1);
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
  const missing = r.acked.filter((a) => counts.get(a.value) !== 1).map((a) => a.value);
  const outOfOrder = stored.filter((v, i) => i > 0 && index(v) <= index(stored[i - 1]!));
  console.log(`idempotent producer across the quorum loss: sent ${r.sent}, acknowledged ${r.acked.length}, failed ${r.failed.length} (${[...new Set(r.failed.map((f) => f.error))].join(', ')}), unflushed ${r.unflushed}, stored ${stored.length}, duplicated ${duplicated.length}`);
  expect(r.acked.length).toBeGreaterThan(100);
  expect(duplicated.slice(0, 10)).toEqual([]);
  expect(missing.slice(0, 10)).toEqual([]);
  expect(outOfOrder.slice(0, 10)).toEqual([]);
  // Acknowledged offsets are where the values are stored. A report without an offset is either a
  // batch the node answered DUPLICATE_SEQUENCE_NUMBER (a retry of one written before but answered
  // REQUEST_TIMED_OUT, older than the 5 batches whose offsets are kept: Kafka answers the same, and
  // librdkafka counts it delivered with no offset), allowed only when a node logged it; or a batch
  // librdkafka itself took as delivered because a later batch of the producer succeeded (its log:
  // "implicitly acked by subsequent batch success (msgids a..b …)"; message ids count from 1, the
  // values from m-0), whose values the checks above found stored exactly once.
  const at = new Map(stored.map((v, i) => [v, i]));
  const misplaced = r.acked.filter((a) => a.offset !== null && at.get(a.value) !== a.offset);
  const implicit = [...out.stderr.matchAll(/implicitly acked by subsequent batch success \(msgids (\d+)\.\.(\d+)/g)].map((m) => [Number(m[1]) - 1, Number(m[2]) - 1] as const);
  const unplaced = r.acked.filter((a) => a.offset === null && !implicit.some(([from, to]) => index(a.value) >= from && index(a.value) <= to));
  const logs = [...c.nodes].map(([id, n]) => `--- node ${id}\n${n.output().slice(-20_000)}`);
  const warned = logs.some((l) => l.includes('a produce repeated a batch older than the acknowledgements kept'));
  if (misplaced.length > 0 || unplaced.length > 0) {
    // What the nodes and the client said decides where to look: their logs go with the report.
    process.stderr.write(`${logs.join('\n')}\n`);
    process.stderr.write(`misplaced: ${JSON.stringify(misplaced.slice(0, 40))}\nwithout an offset (${unplaced.length}): ${JSON.stringify(unplaced.slice(0, 40))}\n`);
    // librdkafka's log (debug "eos,msg") without the sends and deliveries that went as expected.
    const log = out.stderr.split('\n').filter((l) => !/Produce MessageSet with|\) delivered$|beginning partition drain: drain before retrying/.test(l));
    process.stderr.write(`--- librdkafka, ${log.length} lines\n${log.slice(0, 1000).join('\n')}\n`);
  }
  expect(misplaced.slice(0, 10)).toEqual([]);
  if (!warned) expect(unplaced.slice(0, 10)).toEqual([]);
});
