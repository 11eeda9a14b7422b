/**
 * A 3-node cluster in objects mode for the transfer, failover and fencing tests (docs/cluster.md,
 * "Transfers and failover"): a 3-member etcd on loopback, three `svc serve` processes from dist/
 * on one metadata prefix, each with a Durable Streams listener, all with `--objects file:<dir>`
 * on one shared temporary directory. Nodes are started with fixed ids (1, 2, 3) so that a node
 * killed with its data directory wiped can come back under its id. `stop()` in afterAll.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

export interface StreamDetail {
  ownerNodeId: number;
  state: string;
  epoch: number;
  nodeId: number;
  streamId: number;
  endOffset: number | null;
  pendingTransfer: { fromNode: number; toNode: number } | null;
}

export class ObjectsCluster {
  readonly etcd: EtcdCluster;
  readonly objectsDir: string;
  /** The nodes' `--metadata` URL (a test may open the object ledger with it). */
  readonly metadataUrl: string;
  /** Node id → its running process (absent while killed). */
  readonly nodes = new Map<number, NodeProcess>();
  readonly #args: string[];
  readonly #env: NodeJS.ProcessEnv;

  private constructor(etcd: EtcdCluster, objectsDir: string, metadataUrl: string, args: string[], env: NodeJS.ProcessEnv) {
    this.etcd = etcd;
    this.objectsDir = objectsDir;
    this.metadataUrl = metadataUrl;
    this.#args = args;
    this.#env = env;
  }

  /**
   * `store`: the nodes' `--objects` URL and the environment it needs (credentials); default a
   * `file:` directory made here (`objectsDir`).
   */
  static async start(extraArgs: string[] = [], store?: { url: string; env: NodeJS.ProcessEnv }): Promise<ObjectsCluster> {
    const etcd = await EtcdCluster.start(3);
    const objectsDir = tempDir('svc-objects-');
    // Automatic rebalance off unless a test asks for it (`--rebalance auto` in extraArgs: the last flag wins):
    // the other suites move streams themselves and count the moves.
    const metadataUrl = etcd.url(`objects/${randomBytes(4).toString('hex')}`);
    const args = ['--metadata', metadataUrl, '--objects', store?.url ?? `file:${objectsDir}`, '--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0', '--rebalance', 'off', ...extraArgs];
    const c = new ObjectsCluster(etcd, objectsDir, metadataUrl, args, store?.env ?? {});
    try {
      await Promise.all([1, 2, 3].map((id) => c.startNode(id)));
      await c.waitLive(3);
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  /** Start node `id` (on a new, empty data directory unless one is given), with `extraArgs` after the cluster's. */
  async startNode(id: number, dataDir?: string, extraArgs: string[] = []): Promise<NodeProcess> {
    const n = await startNode({ args: [...this.#args, '--node-id', String(id), ...extraArgs], env: this.#env, ...(dataDir !== undefined ? { dataDir } : {}) });
    this.nodes.set(id, n);
    return n;
  }

  /** SIGKILL node `id` and remove its data directory. */
  /** Returns when the process was seen gone (ms): nothing sent after that can reach it. */
  async killAndWipe(id: number): Promise<number> {
    const n = this.nodes.get(id)!;
    this.nodes.delete(id);
    await n.kill();
    const gone = Date.now();
    fs.rmSync(n.dataDir, { recursive: true, force: true });
    return gone;
  }

  /** Any running node other than `not`. */
  any(not?: number): NodeProcess {
    for (const [id, n] of this.nodes) if (id !== not) return n;
    throw new Error('no node running');
  }

  async admin<T>(path: string, init: RequestInit = {}, via?: NodeProcess): Promise<{ status: number; json: T }> {
    const n = via ?? this.any();
    const r = await fetch(`${n.adminUrl!}${path}`, { ...init, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) });
    return { status: r.status, json: (await r.json()) as T };
  }

  async detail(stream: string, via?: NodeProcess): Promise<StreamDetail> {
    return (await this.admin<StreamDetail>(`/admin/streams${stream}`, {}, via)).json;
  }

  async waitLive(count: number, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    for (const n of this.nodes.values()) {
      for (;;) {
        const doc = (await (await fetch(`${n.adminUrl!}/admin/nodes`)).json()) as { nodes: Array<{ live: boolean }> };
        if (doc.nodes.filter((d) => d.live).length === count) break;
        if (Date.now() > end) throw new Error(`the nodes did not all see ${count} live nodes`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.nodes.values()].map((n) => n.kill()));
    this.nodes.clear();
    await this.etcd.stop();
  }
}

export async function until<T>(what: string, fn: () => Promise<T | null>, ms = 20_000, every = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** p-quantile of numbers (nearest rank). */
export function quantile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
}

/**
 * The cluster of a test file: started in beforeAll (`ObjectsCluster.start(extraArgs)`), stopped in
 * afterAll. The value stands for the started cluster (calls and fields go to it), so a file writes
 * `const c = objectsClusterForFile([...])` and uses `c` in its tests.
 */
export function objectsClusterForFile(extraArgs: string[] = []): ObjectsCluster {
  let started: ObjectsCluster | null = null;
  beforeAll(async () => {
    started = await ObjectsCluster.start(extraArgs);
  }, 90_000);
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as ObjectsCluster, {
    get(_target, prop) {
      if (started === null) throw new Error('the cluster is not started yet (use it inside a test or a hook after beforeAll)');
      const v: unknown = Reflect.get(started, prop, started);
      // Methods run on the cluster itself: its #private fields are not on the proxy.
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(started) : v;
    },
  });
}

