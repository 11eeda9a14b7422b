/**
 * A group of the KIP-848 consumer protocol survives the death of its coordinator (docs/cluster.md,
 * "Kafka"; docs/kafka.md, "The consumer group protocol"): 3 etcd members, 3 nodes in objects mode,
 * a 6-partition topic led 2/2/2, three @platformatic/kafka 1.35 members with
 * `groupProtocol: 'consumer'`. The node coordinating the group is SIGKILLed while records keep
 * coming; the group's next coordinator (rendezvous over the live nodes) reads the committed
 * offsets from etcd, the members rejoin it (UNKNOWN_MEMBER_ID, epoch 0) and go on from those
 * offsets. The driver commits each record before it reports it, so a committed offset lost or
 * moved back would show as a record reported twice, and one moved ahead as a record never
 * reported: all 600 records are reported exactly once.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { GroupWire } from '../kafka/group-wire-client';
import { type PltRun, type PltRuntime, platformatic } from '../kafka/platformatic-process';
import { ObjectsCluster, until } from './objects-cluster';

jest.setTimeout(300_000);

const TOPIC = 'kfo';
const GROUP = 'kfo-g';
const PARTITIONS = 6;

let c: ObjectsCluster;
const runs: PltRun[] = [];
let plt2: PltRuntime;

beforeAll(async () => {
  // @platformatic/kafka 2.12 finds a group's coordinator again when it is gone (1.35 keeps the
  // first one for good and crashes once it leaves the metadata); 2.x runs on Node.js 22.22 or
  // later: the pinned Node 24 of the second CI runtime.
  const node = execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'current-node.js')], { encoding: 'utf8' }).trim();
  plt2 = { node, package: '@platformatic/kafka-2' };
  c = await ObjectsCluster.start(['--node-lease-ttl', '3', '--kafka-group-consumer-heartbeat-interval-ms', '300']);
}, 120_000);

afterAll(async () => {
  await Promise.all(runs.map((r) => r.stop()));
  await c?.stop();
});

const brokers = (): string[] => [...c.nodes.values()].map((n) => n.kafka);

/** The node coordinating the group, as `via` answers FindCoordinator. */
async function coordinator(via: string): Promise<number> {
  const w = await GroupWire.connect(via);
  try {
    const r = await w.findCoordinator(3, GROUP);
    if (r.errorCode !== 0) throw new Error(`FindCoordinator: error ${r.errorCode}`);
    return r.nodeId!;
  } finally {
    w.close();
  }
}

/** Committed offsets of the group per partition (a node's OffsetFetch through kafkajs). */
async function committed(): Promise<number[]> {
  const admin = new Kafka({ clientId: 'kfo-admin', brokers: brokers(), logLevel: logLevel.NOTHING, retry: { retries: 10 } }).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    const out = Array.from({ length: PARTITIONS }, () => -1);
    for (const p of t!.partitions) out[p.partition] = Number(p.offset);
    return out;
  } finally {
    await admin.disconnect();
  }
}

async function produce(prefix: string): Promise<void> {
  const producer = new Kafka({ clientId: 'kfo-producer', brokers: brokers(), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } }).producer();
  await producer.connect();
  try {
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 300 }, (_, i) => ({ partition: i % PARTITIONS, value: `${prefix}${i}` })) });
  } finally {
    await producer.disconnect();
  }
}

test('the coordinator node SIGKILLed: the group goes on at its next coordinator from the committed offsets, every record reported exactly once', async () => {
  const admin = new Kafka({ clientId: 'kfo', brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    const md = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    expect(new Set(md.topics[0]!.partitions.map((p) => p.leader)).size).toBe(3);
  } finally {
    await admin.disconnect();
  }
  const victim = await coordinator(brokers()[0]!);
  // The members bootstrap from a node that stays up: the client finds the others in its metadata.
  const survivor = [...c.nodes.entries()].find(([id]) => id !== victim)![1];
  for (let i = 0; i < 3; i++) runs.push(platformatic({ op: 'consume', broker: survivor.kafka, group: GROUP, topics: [TOPIC], mode: 'earliest', groupProtocol: 'consumer', retries: 100 }, plt2));
  const reported = (): string[] => runs.flatMap((r) => r.messages().map((m) => String(m.value)));
  const w = await GroupWire.connect(c.nodes.get(victim)!.kafka);
  let members: string[] = [];
  try {
    await until('three members share the six partitions', async () => {
      const d = (await w.cgDescribe([GROUP])).groups[0]!;
      const held = d.members.flatMap((m) => m.assignment.topicPartitions.flatMap((t) => t.partitions));
      members = d.members.map((m) => m.memberId).sort();
      return d.groupState === 'Stable' && d.members.length === 3 && new Set(held).size === PARTITIONS ? true : null;
    }, 60_000);
  } finally {
    w.close();
  }
  await until('every member sees its two partitions', async () => (runs.every((r) => r.assignment()?.length === 2) ? true : null), 30_000);
  await new Promise((r) => setTimeout(r, 1_000)); // a fetch sent before the last revocation has answered (see consumer-protocol-platformatic.test.ts)

  await produce('a');
  await until('the members reported the first 300 records', async () => (reported().length >= 300 ? true : null), 60_000);
  const before = await committed();
  expect(before).toEqual(Array.from({ length: PARTITIONS }, () => 50));

  // The coordinator dies (it also leads two partitions); records keep coming.
  await c.nodes.get(victim)!.kill();
  c.nodes.delete(victim);
  const producing = produce('b');
  const next = await until('another node coordinates the group', async () => {
    const id = await coordinator(survivor.kafka).catch(() => victim);
    return id !== victim ? id : null;
  }, 30_000);
  expect(c.nodes.has(next)).toBe(true);
  // The next coordinator holds the offsets committed before the death, not fewer.
  const atTakeover = await committed();
  for (let p = 0; p < PARTITIONS; p++) expect(atTakeover[p]).toBeGreaterThanOrEqual(before[p]!);
  await producing;

  await until('the members reported all 600 records', async () => (reported().length >= 600 || runs.every((r) => r.state() !== 'running') ? true : null), 120_000)
    .then(() => {
      if (reported().length < 600) throw new Error('every member exited');
    })
    .catch((err: Error) => {
    throw new Error(`${err.message}: ${reported().length} reported; ${runs.map((r) => `${r.state()} ${r.stderr().slice(-400)}`).join(' | ')}`);
  });
  await new Promise((r) => setTimeout(r, 1_000)); // a moment for a duplicate to show if there were one
  const all = reported();
  expect(all).toHaveLength(600);
  expect(new Set(all).size).toBe(600);
  expect(runs.map((r) => r.state())).toEqual(['running', 'running', 'running']);
  expect(await committed()).toEqual(Array.from({ length: PARTITIONS }, () => 100));
  // The group went on at the new coordinator with the same three members (read back from the
  // store, not rejoined), each with two partitions.
  const w2 = await GroupWire.connect(c.nodes.get(next)!.kafka);
  try {
    const d = (await w2.cgDescribe([GROUP])).groups[0]!;
    expect([d.errorCode, d.groupState]).toEqual([0, 'Stable']);
    expect(d.members.map((m) => m.memberId).sort()).toEqual(members);
    for (const m of d.members) expect(m.assignment.topicPartitions.flatMap((t) => t.partitions)).toHaveLength(2);
  } finally {
    w2.close();
  }
});
