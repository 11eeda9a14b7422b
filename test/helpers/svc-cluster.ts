/**
 * A real 3-node cluster for tests (docs/cluster.md): a 3-member etcd on loopback ports and
 * three `svc serve` processes from dist/ on one metadata prefix, auth required with a root
 * bootstrap token, each with a Durable Streams listener. The same setup as
 * test/node/cluster.test.ts, for tests that need a cluster but test something else on it (the
 * CLI's redirects, the dashboard). `stop()` in afterAll.
 */
import { randomBytes } from 'node:crypto';
import { rendezvous } from '../../src/actors/cluster/rendezvous';
import { EtcdCluster } from './etcd-cluster';
import { type NodeProcess, startNode } from './node-process';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');

export interface TestCluster {
  etcd: EtcdCluster;
  nodes: NodeProcess[];
  /** Node id → its process. */
  byId: Map<number, NodeProcess>;
  /** The root bootstrap token. */
  token: string;
  auth: { authorization: string };
  /** The node that weighted rendezvous places `name` on while all three are live with equal slots. */
  placedOn(name: string): number;
  /** The owner of an existing stream, from a node's admin view. */
  ownerOf(name: string, asker?: NodeProcess): Promise<number>;
  stop(): Promise<void>;
}

export async function startCluster(extraArgs: string[] = []): Promise<TestCluster> {
  const token = `${b64('root')}.${b64(randomBytes(32))}`;
  const auth = { authorization: `Bearer ${token}` };
  const etcd = await EtcdCluster.start(3);
  const args = ['--auth', 'required', '--auth-bootstrap-token', token, '--metadata', etcd.url(`cluster/${randomBytes(4).toString('hex')}`), '--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0', ...extraArgs];
  let nodes: NodeProcess[] = [];
  try {
    nodes = await Promise.all([startNode({ args }), startNode({ args }), startNode({ args })]);
  } catch (err) {
    await etcd.stop();
    throw err;
  }
  const byId = new Map<number, NodeProcess>();
  for (const n of nodes) {
    const c = (await (await fetch(`${n.adminUrl!}/admin/cluster`, { headers: auth })).json()) as { nodeId: number };
    byId.set(c.nodeId, n);
  }
  // Every node sees all three live before any test places a stream.
  const end = Date.now() + 20_000;
  for (const n of nodes) {
    for (;;) {
      const doc = (await (await fetch(`${n.adminUrl!}/admin/nodes`, { headers: auth })).json()) as { nodes: Array<{ live: boolean }> };
      if (doc.nodes.filter((d) => d.live).length === 3) break;
      if (Date.now() > end) throw new Error('the three nodes did not all see each other live');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const candidates = [...byId.keys()].map((nodeId) => ({ nodeId, slots: 1024 }));
  return {
    etcd,
    nodes,
    byId,
    token,
    auth,
    placedOn: (name) => rendezvous(name, candidates)!,
    ownerOf: async (name, asker = nodes[0]!) => {
      const r = await fetch(`${asker.adminUrl!}/admin/streams${name}`, { headers: auth });
      return ((await r.json()) as { ownerNodeId: number }).ownerNodeId;
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
      await etcd.stop();
    },
  };
}
