/**
 * The only file that imports the `etcd3` client (ARCHITECTURE.md, owner table). It gives the
 * metadata store three things the client does not:
 *
 *   requests ──▶ host i (one client per member, no retries of its own)
 *                  │ deadline per attempt (DEFAULT_ATTEMPT_MS); on an error the next attempt goes
 *                  ▼ to the next member. A transaction sent to a follower whose leader died
 *                    otherwise waits out etcd's request timeout (5 s + 2 election timeouts ≈ 7 s).
 *   watch ─────▶ one raw Watch stream at a time, on the current member
 *                  │ resumes from (last delivered revision + 1) after a break: the client's own
 *                  │ resume restarts from the header revision of the last response, which during
 *                  │ catch-up is the head, not the last event sent, and so drops events
 *                  ▼ compacted: the consumer is told (`onCompacted`) and resyncs from a snapshot read
 *
 * TLS and etcd authentication (`etcds://`, `--metadata-ca|cert|key|user|password`: `EtcdAccess`)
 * apply to both paths: the `etcd3` clients get the credentials and user, the transaction channels
 * the same TLS and a token from Auth/Authenticate, asked for again when etcd says it expired.
 * `check()` is the start's first call: a certificate, CA or password etcd refuses is an
 * `EtcdAccessError` at once, naming the problem, not a wait until a deadline.
 *
 * Retrying a write is the caller's business (etcd-meta-store.ts makes it idempotent): a write
 * whose attempt failed may still have been applied. Reads are retried here: they change nothing.
 */
import { Etcd3, type IKeyValue, type IWatchResponse, type IDuplexStream, type IWatchRequest } from 'etcd3';
import { noop } from 'cockatiel';
import { type EtcdRangeRequest, type EtcdRangeResult, decodeAuthenticate, decodeRange, decodeTxn, encodeAuthenticate, encodeRange, encodeReadTxn, encodeTxn, prefixEnd } from './etcd-txn-wire';
import { GrpcStatusError, GrpcUnaryChannel } from './grpc-unary';
import { type EtcdAccess } from './etcd-url';

/** One attempt of one request; past it the next member is tried. */
export const DEFAULT_ATTEMPT_MS = 1500;
/** etcd's KV/Txn method (rpc.proto). */
const TXN_PATH = '/etcdserverpb.KV/Txn';
const RANGE_PATH = '/etcdserverpb.KV/Range';
/** etcd's Auth/Authenticate method: a token for a user and password. */
const AUTHENTICATE_PATH = '/etcdserverpb.Auth/Authenticate';
/** gRPC status codes etcd answers for auth problems (codes.InvalidArgument: wrong user or password; Unauthenticated; PermissionDenied). */
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;
/** Keys per page of a prefix read. */
const RANGE_PAGE = 1000;
/** A catch-up watch response holds up to 1,000 revisions: allow large messages (gRPC's default is 4 MiB). */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** A key-value pair as etcd holds it; revisions as numbers (they stay below 2^53). */
export interface EtcdKv {
  key: string;
  value: Buffer;
  modRevision: number;
  createRevision: number;
  lease: string;
}

/** One change in a watched range. */
export interface EtcdEvent {
  type: 'put' | 'delete';
  kv: EtcdKv;
}

/** A precondition of a transaction. */
export type EtcdCompare =
  | { key: string; modRevision: number } // the key was last written at this revision
  | { key: string; absent: true } // the key does not exist
  | { key: string; present: true } // the key exists
  | { key: string; value: Buffer } // the key exists and holds exactly this value (the object ledger's fences)
  | { prefix: string; empty: true; from?: string }; // no key starts with `prefix` (an object without references); `from`: none from that key on (a key ≥ the prefix)

/** One operation of a transaction branch. `lease` attaches a put to a lease (node registrations). */
export type EtcdOp = { put: string; value: Buffer; lease?: string } | { delete: string } | { deletePrefix: string } | { deleteFrom: string; to: string } | { get: string };

export interface EtcdTxnResult {
  succeeded: boolean;
  /** The store's revision after the transaction: the write's own revision when it wrote. */
  revision: number;
  /** Per `get` op of the branch that ran, in order: the pair, or null. Deletes: how many went. */
  gets: Array<EtcdKv | null>;
  /** Per range op (a `get`, or a read of `readMany`), in order: its whole answer. */
  ranges: EtcdRangeResult[];
  deleted: number[];
}

/** One read of `readMany`: a key, or up to `limit` pairs of `prefix` from the key `from` on (0: no limit; `keysOnly`: values left out). */
export type EtcdRead = { get: string } | { from: string; prefix: string; limit: number; keysOnly?: boolean };

export interface EtcdWatchHandlers {
  /** Events of whole revisions, in revision order; called synchronously, never twice for one revision. */
  onEvents(events: EtcdEvent[]): void;
  /**
   * The watch fell behind a compaction: events before `compactRevision` are gone. Resolve with the
   * revision the consumer has resynced to (a snapshot read); the watch continues after it.
   */
  onCompacted(compactRevision: number): Promise<number>;
  /** A break, for the log (the watch is resumed by itself). */
  onBreak?(err: Error): void;
}

export interface EtcdWatch {
  /** The revision the watch delivers next. */
  readonly nextRevision: number;
  /** Index of the member the watch stream was last opened on. */
  readonly member: number;
  cancel(): void;
}

/** Thrown when every attempt within the deadline failed. */
export class EtcdUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EtcdUnavailableError';
  }
}

/**
 * etcd refused this node's TLS or credentials (a CA that does not sign the members' certificates,
 * a client certificate etcd does not accept, a wrong password, a user without access): trying
 * again or another member will not help, so the start stops with this message.
 */
export class EtcdAccessError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EtcdAccessError';
  }
}

/** Every message and code of an error and its causes, for classifying it. */
function describeChain(err: unknown): { codes: string[]; text: string } {
  const codes: string[] = [];
  const texts: string[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    texts.push(String((e as Error).message ?? e));
  }
  return { codes, text: texts.join(': ') };
}

/** Why `err` says etcd will not take this node's TLS or credentials, or null when it may be passing. */
export function accessProblem(err: unknown, access: EtcdAccess): string | null {
  if (err instanceof GrpcStatusError) {
    if (err.code === GRPC_INVALID_ARGUMENT && /authentication failed/.test(err.message)) return `etcd refused the user or password (--metadata-user ${access.user ?? ''}): ${err.message}`;
    if (err.code === GRPC_UNAUTHENTICATED || (err.code === GRPC_INVALID_ARGUMENT && /user name is empty|token/.test(err.message))) {
      return access.user === undefined ? `etcd has authentication enabled: give --metadata-user and --metadata-password (${err.message})` : `etcd did not accept this node's credentials: ${err.message}`;
    }
    if (err.code === GRPC_PERMISSION_DENIED) {
      return access.user === undefined
        ? `etcd refused access without a user (is authentication enabled?): give --metadata-user and --metadata-password (${err.message})`
        : `etcd user ${access.user} may not use the metadata prefix: ${err.message} (grant it read and write on the prefix)`;
    }
    return null;
  }
  const { codes, text } = describeChain(err);
  const tlsCode = codes.find((c) => /CERT|^ERR_SSL_|^ERR_TLS_|^ERR_OSSL_/.test(c));
  // A connection closed mid-handshake with no alert says nothing of this node's certificates: a
  // busy or starting member does it too, so it is retried like any member that does not answer.
  if (tlsCode === undefined && /socket disconnected before secure TLS connection/i.test(text)) return null;
  if (tlsCode === undefined && !/certificate|ssl|tls|wrong version number/i.test(text)) return null;
  if (/WRONG_VERSION_NUMBER|wrong version number|packet length too long/i.test(text)) return `the etcd member does not speak TLS (etcds://): ${text}`;
  if (/ALERT|alert/.test(tlsCode ?? text)) return `etcd refused this node's client certificate (--metadata-cert, --metadata-key): ${text}`;
  if (access.tls) return `the etcd member's certificate is not trusted (--metadata-ca) or does not name it: ${text}`;
  return `TLS to etcd failed: ${text}`;
}

const toKv = (kv: IKeyValue): EtcdKv => ({
  key: kv.key.toString('utf8'),
  value: kv.value,
  modRevision: Number(kv.mod_revision),
  createRevision: Number(kv.create_revision),
  lease: kv.lease,
});

// Not unref'd: a caller awaiting a retry must keep the process alive (grpc-js channels do not).
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class EtcdLink {
  readonly #hosts: Etcd3[];
  /** Per member, the channel transactions and reads go through (grpc-unary.ts: unary calls without grpc-js; watches and leases use the etcd3 client). */
  readonly #txnChannels: GrpcUnaryChannel[];
  readonly #attemptMs: number;
  readonly #access: EtcdAccess;
  /** Per member, the auth token its transactions carry (etcd auth on), or a request for one. */
  readonly #tokens: Array<Promise<string> | null>;
  /** The member requests go to; moves on after a failed attempt. */
  #current = 0;
  #closed = false;
  readonly #watches = new Set<{ cancel(): void }>();

  constructor(endpoints: readonly string[], options: { attemptMs?: number; access?: EtcdAccess } = {}) {
    if (endpoints.length === 0) throw new Error('etcd: no endpoints');
    this.#attemptMs = options.attemptMs ?? DEFAULT_ATTEMPT_MS;
    const access = (this.#access = options.access ?? { tls: false });
    // Buffers, also when they crossed to a worker thread (which makes them plain Uint8Arrays).
    const buf = (b: Uint8Array | undefined): Buffer | undefined => (b === undefined ? undefined : Buffer.from(b));
    const [ca, cert, key] = [buf(access.ca), buf(access.cert), buf(access.key)];
    const tls = access.tls ? { ...(ca !== undefined ? { ca } : {}), ...(cert !== undefined ? { cert } : {}), ...(key !== undefined ? { key } : {}) } : null;
    // One client per member, with the client's own retries and circuit breakers off: this file
    // decides when to move to another member and what may be retried.
    this.#hosts = endpoints.map(
      (e) =>
        new Etcd3({
          hosts: `${access.tls ? 'https' : 'http'}://${e}`,
          dialTimeout: this.#attemptMs,
          ...(tls !== null && (tls.ca !== undefined || tls.cert !== undefined)
            ? // grpc-js takes null for "the system's CAs"; the client's type asks for a Buffer.
              { credentials: { rootCertificate: (tls.ca ?? null) as Buffer, ...(tls.cert !== undefined ? { certChain: tls.cert, privateKey: tls.key } : {}) } }
            : {}),
          ...(access.user !== undefined ? { auth: { username: access.user, password: access.password ?? '', callOptions: () => ({ deadline: Date.now() + this.#attemptMs }) } } : {}),
          faultHandling: { global: noop, host: () => noop },
          grpcOptions: { 'grpc.keepalive_time_ms': 5000, 'grpc.keepalive_timeout_ms': 3000, 'grpc.keepalive_permit_without_calls': 1, 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES },
        }),
    );
    this.#txnChannels = endpoints.map((e) => new GrpcUnaryChannel(e, tls));
    this.#tokens = endpoints.map(() => null);
    // Spread nodes over members.
    this.#current = Math.floor(Math.random() * this.#hosts.length);
  }

  /** Index (in the endpoints given) of the member the next request and a resumed watch go to. */
  get current(): number {
    return this.#current;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get endpoints(): number {
    return this.#hosts.length;
  }

  /**
   * Run `call` on the current member with a deadline; on failure move to the next member and
   * try again until `deadlineMs` has passed. Only for calls that may safely run twice.
   */
  async #retrying<T>(what: string, deadlineMs: number, call: (host: Etcd3, deadline: Date) => Promise<T>): Promise<T> {
    return this.#failover(what, deadlineMs, (i, end) => call(this.#hosts[i]!, new Date(Math.min(end, Date.now() + this.#attemptMs))));
  }

  /**
   * Run `attempt` on member `i` (the current one; `end`: when the whole call's deadline passes);
   * on failure move to the next member and try again until `deadlineMs` has passed. Only for
   * calls that may safely run twice.
   */
  async #failover<T>(what: string, deadlineMs: number, attempt: (i: number, end: number) => Promise<T>): Promise<T> {
    const end = Date.now() + deadlineMs;
    let last: unknown;
    for (let n = 0; ; n++) {
      if (this.#closed) throw new EtcdUnavailableError(`etcd ${what}: the link is closed`);
      const i = this.#current;
      try {
        return await attempt(i, end);
      } catch (err) {
        last = err;
        if (this.#current === i) this.#current = (i + 1) % this.#hosts.length;
      }
      if (Date.now() >= end) break;
      // A full round over the members failed: give an election time to finish.
      if ((n + 1) % this.#hosts.length === 0) await sleep(Math.min(200, Math.max(0, end - Date.now())));
    }
    throw new EtcdUnavailableError(`etcd ${what} failed on every member for ${deadlineMs} ms: ${(last as Error)?.message}`, { cause: last });
  }

  /**
   * Every pair under `prefix` and the store's revision they were read at (a linearizable read:
   * it reflects every write acknowledged before it was sent). Read in pages of RANGE_PAGE keys,
   * all at the first page's revision, so a large prefix never meets a message size limit.
   * `from`: from this key of the prefix on; `revision`: at this revision (etcd answers a revision
   * compacted away with an error), not the newest.
   */
  async rangePrefix(prefix: string, deadlineMs: number, options: { from?: string; revision?: number } = {}): Promise<{ revision: number; kvs: EtcdKv[] }> {
    const end = prefixEnd(prefix);
    let from = Buffer.from(options.from ?? prefix, 'utf8');
    let revision = options.revision ?? 0;
    const kvs: EtcdKv[] = [];
    for (;;) {
      const page = await this.#range('range', deadlineMs, { key: from, rangeEnd: end, limit: RANGE_PAGE, revision });
      if (revision === 0) revision = page.revision;
      for (const kv of page.kvs) kvs.push(kv);
      const lastKv = page.kvs[page.kvs.length - 1];
      if (!page.more || lastKv === undefined) return { revision, kvs };
      from = Buffer.concat([Buffer.from(lastKv.key, 'utf8'), Buffer.from([0])]);
    }
  }

  /**
   * One page of the keys in [`from`, end of `prefix`), in key order, linearizable: up to `limit`
   * pairs (values left out with `keysOnly`) and whether more follow. The next page starts at the
   * last key + '\0'. For bounded scans (the object reaper, compaction).
   */
  async rangePage(from: string, prefix: string, limit: number, deadlineMs: number, options: { keysOnly?: boolean } = {}): Promise<{ revision: number; kvs: EtcdKv[]; more: boolean }> {
    const page = await this.#range('range', deadlineMs, { key: Buffer.from(from, 'utf8'), rangeEnd: prefixEnd(prefix), limit, keysOnly: options.keysOnly === true });
    return { revision: page.revision, kvs: page.kvs, more: page.more };
  }

  /** How many keys are under `prefix` (a count-only range read: no values cross the wire). */
  async countPrefix(prefix: string, deadlineMs: number): Promise<number> {
    return (await this.#range('count', deadlineMs, { key: Buffer.from(prefix, 'utf8'), rangeEnd: prefixEnd(prefix), countOnly: true })).count;
  }

  /**
   * Several reads in one round trip: a read-only transaction (etcd answers it after a
   * linearizable read, without a raft proposal), every answer at the one revision it returns.
   * For reads that would each be a call of their own (compaction reads each stream it visits:
   * its entries and its m/ record). At most etcd's 128 operations a transaction (--max-txn-ops).
   * Retried on the next member until `deadlineMs` passes, like every read here.
   */
  async readMany(reads: readonly EtcdRead[], deadlineMs: number): Promise<{ revision: number; results: EtcdRangeResult[] }> {
    if (reads.length === 0) return { revision: 0, results: [] };
    const res = decodeTxn(await this.#read('read', deadlineMs, TXN_PATH, encodeReadTxn(reads)));
    if (res.ranges.length !== reads.length) throw new EtcdUnavailableError(`etcd read: ${reads.length} reads answered with ${res.ranges.length} results`);
    return { revision: res.revision, results: res.ranges };
  }

  /** One key, linearizable, with the store's revision. */
  async get(key: string, deadlineMs: number): Promise<{ revision: number; kv: EtcdKv | null }> {
    const res = await this.#range('get', deadlineMs, { key: Buffer.from(key, 'utf8') });
    return { revision: res.revision, kv: res.kvs[0] ?? null };
  }

  /**
   * One attempt of a transaction. Rejects when the attempt failed, in which case it may or may
   * not have been applied: the caller decides how to find out and whether to send it again.
   */
  txnOnce(compare: readonly EtcdCompare[], success: readonly EtcdOp[], failure: readonly EtcdOp[]): Promise<EtcdTxnResult> {
    if (this.#closed) return Promise.reject(new EtcdUnavailableError('etcd txn: the link is closed'));
    const i = this.#current;
    let request: Uint8Array;
    try {
      request = encodeTxn(compare, success, failure);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const failed = (err: unknown): never => {
      if (this.#current === i) this.#current = (i + 1) % this.#hosts.length;
      throw err;
    };
    if (this.#access.user === undefined) return this.#txnChannels[i]!.call(TXN_PATH, request, this.#attemptMs).then(decodeTxn, failed);
    return this.#authedTxn(i, request, true).catch(failed);
  }

  /** A transaction with member `i`'s token; an expired token (refused, so nothing was applied) is renewed once. */
  async #authedTxn(i: number, request: Uint8Array, renew: boolean): Promise<EtcdTxnResult> {
    return decodeTxn(await this.#authedCall(i, TXN_PATH, request, this.#attemptMs, renew));
  }

  /** A call to member `i` with its token; an expired token (refused, so nothing was applied) is renewed once. */
  async #authedCall(i: number, path: string, request: Uint8Array, timeoutMs: number, renew: boolean): Promise<Buffer> {
    const token = await this.#token(i);
    try {
      return await this.#txnChannels[i]!.call(path, request, timeoutMs, { token });
    } catch (err) {
      if (renew && err instanceof GrpcStatusError && /invalid auth token|token/i.test(err.message)) {
        this.#tokens[i] = null;
        return this.#authedCall(i, path, request, timeoutMs, false);
      }
      throw err;
    }
  }

  /**
   * A linearizable Range over the members' unary channels (grpc-unary.ts), as transactions go:
   * the `etcd3` client's reflective decoding cost the object maintenance thread, which reads
   * each compacted stream's entries and its m/ record twice, more CPU than its own work (a
   * W2 profile: grpc-js, protobufjs and Long's decimal strings, some 4 s of 25). Retried on
   * the next member until `deadlineMs` passes, like every read here.
   */
  async #range(what: string, deadlineMs: number, q: EtcdRangeRequest): Promise<EtcdRangeResult> {
    return decodeRange(await this.#read(what, deadlineMs, RANGE_PATH, encodeRange(q)));
  }

  /** A call that only reads (a Range, a read-only Txn): on the members' unary channels, with the token if any, retried on the next member until `deadlineMs` passes. */
  #read(what: string, deadlineMs: number, path: string, request: Uint8Array): Promise<Buffer> {
    return this.#failover(what, deadlineMs, (i, end) => {
      const timeoutMs = Math.max(1, Math.min(this.#attemptMs, end - Date.now()));
      return this.#access.user === undefined ? this.#txnChannels[i]!.call(path, request, timeoutMs) : this.#authedCall(i, path, request, timeoutMs, true);
    });
  }


  /** Member `i`'s auth token, asked for once and shared by the calls waiting for it. */
  #token(i: number): Promise<string> {
    const cached = this.#tokens[i];
    if (cached !== null && cached !== undefined) return cached;
    const asked = this.#txnChannels[i]!.call(AUTHENTICATE_PATH, encodeAuthenticate(this.#access.user ?? '', this.#access.password ?? ''), this.#attemptMs).then(decodeAuthenticate);
    this.#tokens[i] = asked;
    asked.catch(() => {
      if (this.#tokens[i] === asked) this.#tokens[i] = null;
    });
    return asked;
  }

  /**
   * The start's first call: reach a member over the transaction channel (TLS, then the user's
   * token, then a read of `key`) until one answers or `deadlineMs` passes. A refusal of this
   * node's TLS or credentials rejects at once with an EtcdAccessError that says which; members
   * that do not answer are tried in turn, and an EtcdUnavailableError says what the last one did.
   */
  async check(key: string, deadlineMs: number): Promise<void> {
    const end = Date.now() + deadlineMs;
    let last: unknown;
    for (let attempt = 0; ; attempt++) {
      const i = this.#current;
      try {
        await this.txnOnce([], [{ get: key }], []);
        return;
      } catch (err) {
        last = err;
        const problem = accessProblem(err, this.#access);
        if (problem !== null) throw new EtcdAccessError(problem, { cause: err });
        if (this.#current === i) this.#current = (i + 1) % this.#hosts.length;
      }
      if (Date.now() >= end || this.#closed) break;
      if ((attempt + 1) % this.#hosts.length === 0) await sleep(Math.min(200, Math.max(0, end - Date.now())));
    }
    const text = String((last as Error)?.message);
    // A TLS member answers a plaintext HTTP/2 preface by closing the connection.
    const hint = !this.#access.tls && /HTTP status 0|without an answer/.test(text) ? ' (do the members serve TLS? then use etcds://)' : '';
    throw new EtcdUnavailableError(`no etcd member answered within ${deadlineMs} ms: ${text}${hint}`, { cause: last });
  }

  /** A lease of `ttlSeconds`, kept alive by the client until revoked (node registrations use one). */
  async grantLease(ttlSeconds: number, deadlineMs: number): Promise<string> {
    return this.#retrying('lease grant', deadlineMs, async (host, deadline) => {
      const res = await host.leaseClient.leaseGrant({ TTL: ttlSeconds }, { deadline });
      return res.ID;
    });
  }

  /** Revoke a lease: every key attached to it is deleted at once (a node leaving the cluster). */
  async revokeLease(leaseId: string, deadlineMs: number): Promise<void> {
    await this.#retrying('lease revoke', deadlineMs, async (host, deadline) => {
      await host.leaseClient.leaseRevoke({ ID: leaseId }, { deadline });
    });
  }

  /** Keep a lease alive once (idempotent); the caller repeats it well within the TTL. */
  async keepAliveOnce(leaseId: string, deadlineMs: number): Promise<number> {
    return this.#retrying('lease keepalive', deadlineMs, async (host, deadline) => {
      const stream = await host.leaseClient.leaseKeepAlive({ deadline });
      try {
        const ttl = await new Promise<number>((resolve, reject) => {
          stream.on('data', (r: { TTL: string }) => resolve(Number(r.TTL)));
          stream.on('error', reject);
          stream.write({ ID: leaseId });
        });
        return ttl;
      } finally {
        stream.end();
      }
    });
  }

  /**
   * Watch every key under `prefix` from `fromRevision` on, for ever: after a break the watch is
   * created again (on the next member) at the revision after the last one delivered.
   */
  watchPrefix(prefix: string, fromRevision: number, handlers: EtcdWatchHandlers): EtcdWatch {
    let next = fromRevision;
    let stream: IDuplexStream<IWatchRequest, IWatchResponse> | null = null;
    let cancelled = false;
    let backoffMs = 50;
    let member = this.#current;
    const key = Buffer.from(prefix, 'utf8');
    const rangeEnd = prefixEnd(prefix);
    const handle = {
      get nextRevision() {
        return next;
      },
      get member() {
        return member;
      },
      cancel: (): void => {
        cancelled = true;
        this.#watches.delete(handle);
        stream?.cancel();
        stream = null;
      },
    };
    this.#watches.add(handle);

    const broke = (err: Error): void => {
      if (cancelled || this.#closed) return;
      stream?.cancel();
      stream = null;
      handlers.onBreak?.(err);
      if (this.#current === member) this.#current = (member + 1) % this.#hosts.length;
      setTimeout(open, backoffMs).unref();
      backoffMs = Math.min(1000, backoffMs * 2);
    };

    const onResponse = (res: IWatchResponse): void => {
      if (cancelled) return;
      if (res.canceled) {
        const compacted = Number(res.compact_revision);
        if (compacted > 0) {
          // Events before `compacted` are gone: resync from a snapshot, then go on after it.
          stream?.cancel();
          stream = null;
          handlers.onCompacted(compacted).then(
            (resynced) => {
              next = resynced + 1;
              if (!cancelled) open();
            },
            (err: unknown) => broke(err as Error),
          );
          return;
        }
        return broke(new Error(`etcd watch cancelled: ${res.cancel_reason}`));
      }
      if (res.created) {
        backoffMs = 50;
        return;
      }
      if (res.events.length === 0) return; // a progress notification: it moves nothing here
      const events = res.events.map((e): EtcdEvent => ({ type: e.type === 'Delete' ? 'delete' : 'put', kv: toKv(e.kv) }));
      // Only revisions past what was delivered (a resumed watch never repeats one, but be sure).
      const fresh = events.filter((e) => e.kv.modRevision >= next);
      if (fresh.length === 0) return;
      next = fresh[fresh.length - 1]!.kv.modRevision + 1;
      handlers.onEvents(fresh);
    };

    const open = (): void => {
      if (cancelled || this.#closed) return;
      member = this.#current;
      const host = this.#hosts[member]!;
      host.watchClient.watch().then(
        (s) => {
          if (cancelled) return s.cancel();
          stream = s;
          s.on('data', onResponse);
          s.on('error', (err: Error) => {
            if (stream === s) broke(err);
          });
          s.on('end', () => {
            if (stream === s) broke(new Error('etcd watch stream ended'));
          });
          s.write({ create_request: { key, range_end: rangeEnd, start_revision: next } });
        },
        (err: unknown) => broke(err as Error),
      );
    };
    open();
    return handle;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of [...this.#watches]) w.cancel();
    for (const h of this.#hosts) h.close();
    for (const c of this.#txnChannels) c.close();
  }
}
