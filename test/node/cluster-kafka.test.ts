/**
 * The Kafka listener of a 3-node cluster (3 etcd members, 3 nodes on loopback; docs/cluster.md,
 * "Kafka"): a 3-partition topic whose partitions live on three different nodes; Metadata names
 * every node a broker and each partition's owner its leader; kcat and @platformatic/kafka produce
 * and consume across them; a node that does not lead a partition answers NOT_LEADER_OR_FOLLOWER;
 * a kcat consumer group spanning the nodes commits and resumes at its committed offsets.
 */
import { randomBytes } from 'node:crypto';
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from '../../src/kafka-wire/messages/list-offsets';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from '../kafka/group-wire-client';
import { RawKafka } from '../kafka/kafka-test-client';
import { batchOf, produce as rawProduce } from '../kafka/raw-produce';
import { kcatOut } from '../kafka/kcat-process';
import { platformatic } from '../kafka/platformatic';

jest.setTimeout(120_000);

let etcd: EtcdCluster;
let nodes: NodeProcess[] = [];
const byId = new Map<number, NodeProcess>();


beforeAll(async () => {
  etcd = await EtcdCluster.start(3);
  const args = ['--metadata', etcd.url(`kafka/${randomBytes(4).toString('hex')}`), '--shards', '2', '--shard-workers', '1'];
  nodes = await Promise.all([startNode({ args }), startNode({ args }), startNode({ args })]);
  for (const n of nodes) byId.set(((await (await fetch(`${n.adminUrl!}/admin/cluster`)).json()) as { nodeId: number }).nodeId, n);
  // Every node sees the three live nodes before anything is placed.
  for (const n of nodes) {
    for (let i = 0; i < 100; i++) {
      const doc = (await (await fetch(`${n.adminUrl!}/admin/nodes`)).json()) as { nodes: Array<{ live: boolean }> };
      if (doc.nodes.filter((d) => d.live).length === 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 90_000);
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await etcd?.stop();
});

const topic = `kc-${randomBytes(3).toString('hex')}`;
/** The node leading each partition, read in the first test (placement spreads a topic's partitions: docs/cluster.md, "Placement"). */
const owners: number[] = [];
const FORMAT = '%p:%o:%s\\n';
const lines = (out: string): string[] => out.split('\n').filter((l) => l !== '').sort();

test('a 3-partition topic created through one node has its partitions on three nodes, and Metadata says so', async () => {
  const created = await platformatic({ op: 'admin', broker: nodes[0]!.kafka, create: [{ topic, partitions: 3 }] });
  expect(created).toMatchObject({ ok: true });
  for (const p of [0, 1, 2]) {
    const name = p === 0 ? `/${topic}` : `/${topic}/${p}`;
    const d = (await (await fetch(`${nodes[1]!.adminUrl!}/admin/streams${encodeURIComponent(name).replace(/%2F/g, '/')}`)).json()) as { ownerNodeId: number; state: string };
    expect(d).toMatchObject({ state: 'placed' });
    owners.push(d.ownerNodeId);
  }
  // One partition per node: a topic's partitions are spread first, whatever else the nodes hold.
  expect(new Set(owners).size).toBe(3);
  // kcat -L through any node: three brokers, each partition led by its owner.
  const md = await kcatOut(['-L', '-b', nodes[2]!.kafka, '-t', topic]);
  expect(md).toContain('3 brokers:');
  for (const [id, n] of byId) expect(md).toContain(`broker ${id} at ${n.kafka}`);
  for (const [p, owner] of owners.entries()) expect(md).toMatch(new RegExp(`partition ${p}, leader ${owner},`));
});

test('a node that does not lead a partition answers Produce and ListOffsets with NOT_LEADER_OR_FOLLOWER', async () => {
  const other = nodes.find((n) => n !== byId.get(owners[0]!))!;
  const k = await RawKafka.connect(other.kafka);
  try {
    expect((await rawProduce(k, topic, batchOf(['nope']))).errorCode).toBe(6);
    const r = await k.request(2, 5, false, (w) => encodeListOffsetsRequest(w, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n }] }] }, 5));
    expect(decodeListOffsetsResponse(r, 5).topics[0]!.partitions[0]!.errorCode).toBe(6);
  } finally {
    k.close();
  }
  // The owner takes the same request.
  const own = await RawKafka.connect(byId.get(owners[0]!)!.kafka);
  try {
    expect((await rawProduce(own, topic, batchOf(['p0-raw']))).errorCode).toBe(0);
  } finally {
    own.close();
  }
});

test('kcat and @platformatic/kafka produce and consume across the partitions on different nodes', async () => {
  // kcat routes each partition's produce to its leader through one bootstrap node.
  for (const p of [0, 1, 2]) await kcatOut(['-P', '-b', nodes[0]!.kafka, '-t', topic, '-p', String(p)], `k${p}a\nk${p}b\n`);
  const plt = await platformatic({ op: 'produce', broker: nodes[1]!.kafka, topic, messages: [{ key: 'x', value: 'plt0' }] });
  expect(plt).toMatchObject({ ok: true });
  const all = await kcatOut(['-C', '-b', nodes[2]!.kafka, '-t', topic, '-o', 'beginning', '-e', '-f', FORMAT]);
  expect(lines(all)).toEqual(['0:0:p0-raw', '0:1:k0a', '0:2:k0b', '0:3:plt0', '1:0:k1a', '1:1:k1b', '2:0:k2a', '2:1:k2b']);
  // @platformatic/kafka reads each partition from its leader (Metadata), whichever node it bootstraps from.
  for (const p of [1, 2]) {
    const r = await platformatic({ op: 'consume', broker: nodes[0]!.kafka, topic, partition: p });
    expect(r).toMatchObject({ ok: true });
    expect(r.records!.map((x) => x.value)).toEqual([`k${p}a`, `k${p}b`]);
  }
});

test('a consumer group spanning the nodes commits and resumes at its committed offsets', async () => {
  const group = `g-${randomBytes(3).toString('hex')}`;
  // FindCoordinator names the same node from every node (checked below); its offsets are in the shared metadata.
  // -o stored: the committed offset, or (first time) the earliest. kcat commits when it closes.
  const stored = ['-G', group, '-o', 'stored', '-X', 'auto.offset.reset=earliest', '-e', '-f', FORMAT, topic];
  const first = await kcatOut(['-b', nodes[1]!.kafka, ...stored]);
  expect(lines(first)).toHaveLength(8);
  for (const p of [0, 1, 2]) await kcatOut(['-P', '-b', nodes[0]!.kafka, '-t', topic, '-p', String(p)], `after${p}\n`);
  // The group resumes where it committed, through another bootstrap node: only the new records.
  const second = await kcatOut(['-b', nodes[2]!.kafka, ...stored]);
  expect(lines(second)).toEqual(['0:4:after0', '1:2:after1', '2:2:after2']);
});

test('FindCoordinator names the same coordinating node on every node', async () => {
  const answers = await Promise.all(
    nodes.map(async (n) => {
      const w = await GroupWire.connect(n.kafka);
      try {
        const r = await w.findCoordinator(3, 'some-group');
        return { errorCode: r.errorCode, nodeId: r.nodeId, host: r.host, port: r.port };
      } finally {
        w.close();
      }
    }),
  );
  expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
  expect(answers[0]!.errorCode).toBe(0);
  expect(`${answers[0]!.host}:${answers[0]!.port}`).toBe(byId.get(answers[0]!.nodeId!)!.kafka);
  // Any other node refuses to coordinate it, so no group is ever split between two coordinators.
  const other = nodes.find((n) => n !== byId.get(answers[0]!.nodeId!))!;
  const w = await GroupWire.connect(other.kafka);
  try {
    expect((await w.join('some-group')).errorCode).toBe(16);
  } finally {
    w.close();
  }
});

test('DeleteTopics through one node deletes the partitions on every node and frees their names', async () => {
  const r = await platformatic({ op: 'admin', broker: nodes[1]!.kafka, delete: [topic] });
  expect(r).toMatchObject({ ok: true });
  expect(r.topics).not.toContain(topic);
  for (const [p, owner] of owners.entries()) {
    const name = p === 0 ? `/${topic}` : `/${topic}/${p}`;
    for (const n of nodes) expect((await fetch(`${n.adminUrl!}/admin/streams${name}`)).status).toBe(404);
    // Gone from its owner's storage too.
    expect((await fetch(`${byId.get(owner)!.url}${name}`, { method: 'HEAD' })).status).toBe(404);
  }
});

test('streams created over HTTP, one with Svc-Kafka-Topic, are one topic to Kafka clients on any node', async () => {
  const t = `ht-${randomBytes(3).toString('hex')}`;
  const put = async (name: string, headers: Record<string, string>): Promise<void> => {
    let r = await fetch(`${nodes[0]!.url}${name}`, { method: 'PUT', headers, redirect: 'manual' });
    if (r.status === 307) r = await fetch(r.headers.get('location')!, { method: 'PUT', headers });
    expect(r.status).toBe(201);
  };
  await put(`/${t}`, {});
  await put(`/${t}/1`, { 'svc-kafka-topic': t });
  let md = '';
  for (let i = 0; i < 50 && !md.includes('2 partitions'); i++) {
    md = await kcatOut(['-L', '-b', nodes[2]!.kafka, '-t', t]);
    if (!md.includes('2 partitions')) await new Promise((r) => setTimeout(r, 200));
  }
  expect(md).toContain(`topic "${t}" with 2 partitions`);
});
