/**
 * A real etcd cluster for tests: `members` Debian etcd-server processes on free loopback ports,
 * data in a temporary directory, short election timeouts so a killed leader is replaced in about
 * a second. Members can be killed with SIGKILL (by PID) and started again on their data.
 * `stop()` kills what is left and removes the data; call it in afterAll.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePorts } from './free-ports';

export { freePort } from './free-ports';

export interface EtcdMember {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  proc: ChildProcess | null;
}

export class EtcdCluster {
  readonly members: EtcdMember[];
  readonly #root: string;
  readonly #initialCluster: string;

  private constructor(root: string, members: EtcdMember[]) {
    this.#root = root;
    this.members = members;
    this.#initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  }

  /**
   * Start `size` members and wait until the cluster answers a linearizable read. A port can still
   * be taken by another process between its release and etcd's bind; if a member dies before the
   * cluster is healthy, the attempt is thrown away and made again on new ports (3 attempts).
   */
  static async start(size = 3): Promise<EtcdCluster> {
    let lastErr: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-etcd-'));
      const ports = await freePorts(2 * size);
      const members: EtcdMember[] = [];
      for (let i = 0; i < size; i++) {
        members.push({ name: `m${i}`, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]!, dataDir: path.join(root, `m${i}`), proc: null });
      }
      const cluster = new EtcdCluster(root, members);
      for (let i = 0; i < size; i++) cluster.startMember(i);
      try {
        await cluster.waitHealthy(30_000, { failOnExit: true });
        return cluster;
      } catch (err) {
        lastErr = new Error(`${(err as Error).message}\n${cluster.logTail()}`, { cause: err });
        await cluster.stop();
      }
    }
    throw lastErr!;
  }

  /** The last lines each member logged (its fatal error, when it died). */
  logTail(): string {
    return this.members
      .map((m) => {
        try {
          return `${m.name}: ${fs.readFileSync(path.join(this.#root, `${m.name}.log`), 'utf8').trim().split('\n').slice(-3).join('\n')}`;
        } catch {
          return `${m.name}: (no log)`;
        }
      })
      .join('\n');
  }

  /** host:port of every member, for `etcd://…`. */
  get endpoints(): string[] {
    return this.members.map((m) => `127.0.0.1:${m.clientPort}`);
  }

  url(prefix: string): string {
    return `etcd://${this.endpoints.join(',')}/${prefix}`;
  }

  startMember(i: number): void {
    const m = this.members[i]!;
    if (m.proc !== null) throw new Error(`etcd member ${m.name} is running`);
    const args = [
      '--name', m.name,
      '--data-dir', m.dataDir,
      '--listen-client-urls', `http://127.0.0.1:${m.clientPort}`,
      '--advertise-client-urls', `http://127.0.0.1:${m.clientPort}`,
      '--listen-peer-urls', `http://127.0.0.1:${m.peerPort}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${m.peerPort}`,
      '--initial-cluster', this.#initialCluster,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', path.basename(this.#root),
      '--heartbeat-interval', '50',
      '--election-timeout', '500',
      '--logger', 'zap',
      '--log-level', 'error',
      '--log-outputs', path.join(this.#root, `${m.name}.log`),
    ];
    const proc = spawn('etcd', args, { stdio: 'ignore' });
    proc.on('exit', () => {
      if (m.proc === proc) m.proc = null;
    });
    m.proc = proc;
  }

  /** SIGKILL member `i` by its PID and wait until it is gone. */
  async kill(i: number): Promise<void> {
    const m = this.members[i]!;
    const proc = m.proc;
    if (proc === null || proc.exitCode !== null) return;
    const gone = new Promise<void>((r) => proc.once('exit', () => r()));
    process.kill(proc.pid!, 'SIGKILL');
    await gone;
    m.proc = null;
  }

  /** Index of the current leader (asked with etcdctl). */
  leader(): number {
    const out = execFileSync('etcdctl', ['--endpoints', this.endpoints.join(','), 'endpoint', 'status', '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000 }).toString();
    const statuses = JSON.parse(out) as Array<{ Endpoint: string; Status: { header: { member_id: number }; leader: number } }>;
    const leaderId = statuses[0]!.Status.leader;
    const at = statuses.find((s) => s.Status.header.member_id === leaderId)!.Endpoint;
    return this.members.findIndex((m) => at.endsWith(`:${m.clientPort}`));
  }

  /** Compact the key history up to the current revision (physical: wait until it is done). */
  compact(): number {
    const env = { ...process.env, ETCDCTL_API: '3' };
    const out = execFileSync('etcdctl', ['--endpoints', this.endpoints.join(','), 'endpoint', 'status', '-w', 'json'], { env, timeout: 10_000 }).toString();
    const rev = Math.max(...(JSON.parse(out) as Array<{ Status: { header: { revision: number } } }>).map((s) => s.Status.header.revision));
    execFileSync('etcdctl', ['--endpoints', this.endpoints.join(','), 'compaction', '--physical', String(rev)], { env, timeout: 10_000 });
    return rev;
  }

  /** Run etcdctl with the members as endpoints (e.g. `put k v` written behind the store's back). */
  etcdctl(...args: string[]): string {
    return execFileSync('etcdctl', ['--endpoints', this.endpoints.join(','), ...args], { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000 }).toString();
  }

  /**
   * Wait until the running members answer a linearizable read. With `failOnExit`, a member that
   * has exited (started members only die on their own before the cluster forms) fails at once.
   */
  async waitHealthy(timeoutMs = 30_000, { failOnExit = false } = {}): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const dead = this.members.filter((m) => m.proc === null).map((m) => m.name);
      if (failOnExit && dead.length > 0) throw new Error(`etcd member(s) ${dead.join(', ')} exited before the cluster became healthy`);
      try {
        execFileSync('etcdctl', ['--endpoints', this.endpoints.filter((_, i) => this.members[i]!.proc !== null).join(','), '--command-timeout', '2s', 'get', 'health-probe'], {
          env: { ...process.env, ETCDCTL_API: '3' },
          stdio: 'ignore',
          timeout: 5000,
        });
        return;
      } catch (err) {
        if (Date.now() > end) throw new Error(`etcd cluster did not become healthy: ${(err as Error).message}`, { cause: err });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async stop(): Promise<void> {
    for (let i = 0; i < this.members.length; i++) await this.kill(i);
    fs.rmSync(this.#root, { recursive: true, force: true });
  }
}
