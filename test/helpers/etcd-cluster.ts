/**
 * A real etcd cluster for tests: `members` Debian etcd-server processes on free loopback ports,
 * data in a temporary directory, short election timeouts so a killed leader is replaced in about
 * a second. Members can be killed with SIGKILL (by PID) and started again on their data.
 * `stop()` kills what is left and removes the data; call it in afterAll.
 *
 * `start(size, {tls: true})`: members serve clients over TLS only and ask for a client
 * certificate (`--client-cert-auth`), with a CA, server and client certificates made here with
 * openssl (`tls`); `enableAuth(user, password)` then turns on etcd authentication.
 *
 * `SVC_TEST_ETCD=tls` in the test run's environment makes every cluster started without an
 * explicit `tls` option a TLS cluster with authentication, and exports the client settings
 * (`SVC_METADATA_CA`, `_CERT`, `_KEY`, `_USER`, `_PASSWORD`) so the nodes the tests start reach it
 * with no change to their arguments: `SVC_TEST_ETCD=tls npx jest test/cluster` runs the cluster
 * suite over TLS and etcd authentication (docs/cluster.md, "etcd over TLS").
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type EtcdAccess, type EtcdCredentials } from '../../src/actors';
import { freePorts } from './free-ports';

export { freePort } from './free-ports';

export interface EtcdMember {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  proc: ChildProcess | null;
}

/** PEM files made for a TLS cluster: a CA, the members' certificate, a client certificate, and a second CA that signed neither. */
export interface EtcdTls {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA and a client certificate of its own that the members do not trust. */
  otherCa: string;
  otherCert: string;
  otherKey: string;
}

/** A CA, a server certificate for 127.0.0.1/localhost and client certificates (CN=svc-client), made with openssl. */
export function makeEtcdTls(dir: string): EtcdTls {
  fs.mkdirSync(dir, { recursive: true });
  const f = (n: string): string => path.join(dir, n);
  const run = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore', timeout: 30_000 });
  const ca = (name: string): void => run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}-key.pem`), '-out', f(`${name}.pem`), '-days', '2', '-subj', `/CN=${name}`);
  const signed = (name: string, by: string, cn: string, ext: string): void => {
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}-key.pem`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    fs.writeFileSync(f(`${name}.ext`), ext);
    run('x509', '-req', '-in', f(`${name}.csr`), '-CA', f(`${by}.pem`), '-CAkey', f(`${by}-key.pem`), '-CAcreateserial', '-out', f(`${name}.pem`), '-days', '2', '-extfile', f(`${name}.ext`));
  };
  ca('ca');
  ca('other-ca');
  signed('server', 'ca', 'etcd', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  signed('client', 'ca', 'svc-client', 'extendedKeyUsage=clientAuth\n');
  signed('other', 'other-ca', 'svc-client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    ca: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server-key.pem'),
    clientCert: f('client.pem'),
    clientKey: f('client-key.pem'),
    otherCa: f('other-ca.pem'),
    otherCert: f('other.pem'),
    otherKey: f('other-key.pem'),
  };
}

/** The etcd user of a cluster started under `SVC_TEST_ETCD=tls`. */
const TEST_USER = 'svc';

export class EtcdCluster {
  readonly members: EtcdMember[];
  readonly #root: string;
  readonly #initialCluster: string;
  /** Set for a TLS cluster (`start(n, {tls: true})`). */
  readonly tls: EtcdTls | null;
  /** Set once `enableAuth` ran: etcdctl goes as the root user. */
  #rootAuth: string | null = null;
  /** The user the nodes go as, when `SVC_TEST_ETCD=tls` turned authentication on. */
  #userAuth: { user: string; password: string } | null = null;

  private constructor(root: string, members: EtcdMember[], tls: EtcdTls | null = null) {
    this.#root = root;
    this.tls = tls;
    this.members = members;
    this.#initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  }

  /**
   * Start `size` members and wait until the cluster answers a linearizable read. A port can still
   * be taken by another process between its release and etcd's bind; if a member dies before the
   * cluster is healthy, the attempt is thrown away and made again on new ports (3 attempts).
   */
  static async start(size = 3, options: { tls?: boolean } = {}): Promise<EtcdCluster> {
    const fromEnv = options.tls === undefined && process.env.SVC_TEST_ETCD === 'tls';
    const cluster = await EtcdCluster.#start(size, options.tls ?? fromEnv);
    if (fromEnv) {
      const password = 'pw-' + path.basename(cluster.#root);
      cluster.enableAuth(TEST_USER, password);
      const t = cluster.tls!;
      Object.assign(process.env, { SVC_METADATA_CA: t.ca, SVC_METADATA_CERT: t.clientCert, SVC_METADATA_KEY: t.clientKey, SVC_METADATA_USER: TEST_USER, SVC_METADATA_PASSWORD: password });
      cluster.#userAuth = { user: TEST_USER, password };
    }
    return cluster;
  }

  static async #start(size: number, tls: boolean): Promise<EtcdCluster> {
    let lastErr: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-etcd-'));
      const ports = await freePorts(2 * size);
      const members: EtcdMember[] = [];
      for (let i = 0; i < size; i++) {
        members.push({ name: `m${i}`, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]!, dataDir: path.join(root, `m${i}`), proc: null });
      }
      const cluster = new EtcdCluster(root, members, tls ? makeEtcdTls(path.join(root, 'tls')) : null);
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

  /** How an in-process `EtcdLink` reaches this cluster (TLS files and the user, when set). */
  access(): EtcdAccess | undefined {
    if (this.tls === null) return undefined;
    const t = this.tls;
    return { tls: true, ca: fs.readFileSync(t.ca), cert: fs.readFileSync(t.clientCert), key: fs.readFileSync(t.clientKey), ...(this.#userAuth ?? {}) };
  }

  /** What a metadata URL of this cluster needs beside it (`Ledger.open(url, {credentials})`): the TLS files and the user, when set. */
  credentials(): EtcdCredentials {
    const { tls: _, ...credentials } = this.access() ?? { tls: false };
    return credentials;
  }

  url(prefix: string): string {
    return `${this.tls === null ? 'etcd' : 'etcds'}://${this.endpoints.join(',')}/${prefix}`;
  }

  /** etcdctl's flags for this cluster: endpoints, and with TLS the CA and client certificate, with auth the root user. */
  #ctlArgs(endpoints = this.endpoints): string[] {
    const out = ['--endpoints', endpoints.map((e) => (this.tls === null ? e : `https://${e}`)).join(',')];
    if (this.tls !== null) out.push('--cacert', this.tls.ca, '--cert', this.tls.clientCert, '--key', this.tls.clientKey);
    if (this.#rootAuth !== null) out.push('--user', this.#rootAuth);
    return out;
  }

  /**
   * Turn on etcd authentication: a root user (etcd needs one), and `user` with `password` and
   * read-write access to every key (the node's metadata prefix and its write markers).
   */
  enableAuth(user: string, password: string): void {
    const rootPassword = 'root-' + path.basename(this.#root);
    this.etcdctl('user', 'add', `root:${rootPassword}`);
    this.etcdctl('user', 'grant-role', 'root', 'root');
    this.etcdctl('user', 'add', `${user}:${password}`);
    this.etcdctl('role', 'add', 'svc');
    this.etcdctl('role', 'grant-permission', '--prefix=true', 'svc', 'readwrite', '');
    this.etcdctl('user', 'grant-role', user, 'svc');
    this.etcdctl('auth', 'enable');
    this.#rootAuth = `root:${rootPassword}`;
  }

  startMember(i: number): void {
    const m = this.members[i]!;
    if (m.proc !== null) throw new Error(`etcd member ${m.name} is running`);
    const scheme = this.tls === null ? 'http' : 'https';
    const args = [
      '--name', m.name,
      '--data-dir', m.dataDir,
      '--listen-client-urls', `${scheme}://127.0.0.1:${m.clientPort}`,
      '--advertise-client-urls', `${scheme}://127.0.0.1:${m.clientPort}`,
      ...(this.tls === null ? [] : ['--cert-file', this.tls.serverCert, '--key-file', this.tls.serverKey, '--trusted-ca-file', this.tls.ca, '--client-cert-auth']),
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
    const out = execFileSync('etcdctl', [...this.#ctlArgs(), 'endpoint', 'status', '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000 }).toString();
    const statuses = JSON.parse(out) as Array<{ Endpoint: string; Status: { header: { member_id: number }; leader: number } }>;
    const leaderId = statuses[0]!.Status.leader;
    const at = statuses.find((s) => s.Status.header.member_id === leaderId)!.Endpoint;
    return this.members.findIndex((m) => at.endsWith(`:${m.clientPort}`));
  }

  /** Compact the key history up to the current revision (physical: wait until it is done). */
  compact(): number {
    const env = { ...process.env, ETCDCTL_API: '3' };
    const out = execFileSync('etcdctl', [...this.#ctlArgs(), 'endpoint', 'status', '-w', 'json'], { env, timeout: 10_000 }).toString();
    const rev = Math.max(...(JSON.parse(out) as Array<{ Status: { header: { revision: number } } }>).map((s) => s.Status.header.revision));
    execFileSync('etcdctl', [...this.#ctlArgs(), 'compaction', '--physical', String(rev)], { env, timeout: 10_000 });
    return rev;
  }

  /** Run etcdctl with the members as endpoints (e.g. `put k v` written behind the store's back). */
  etcdctl(...args: string[]): string {
    return execFileSync('etcdctl', [...this.#ctlArgs(), ...args], { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000 }).toString();
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
        execFileSync('etcdctl', [...this.#ctlArgs(this.endpoints.filter((_, i) => this.members[i]!.proc !== null)), '--command-timeout', '2s', 'get', 'health-probe'], {
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
