/**
 * The Kafka listener on a gateway thread (`--gateway-threads`, docs/kafka.md, "Gateway threads"):
 * the main thread accepts each connection and hands its socket to the thread with the fewest
 * (server.ts, `handOff`); from then on the thread reads its frames, keeps their order, and
 * serves its Produce, Fetch and ListOffsets requests itself, over its own channels to the shard
 * workers. Every other request goes to the main thread's listener (relay.ts), which holds what
 * must have one owner: the group and transaction coordinators, share groups, the schema
 * registry's store, the topic configs.
 *
 *   client ──TCP──▶ thread: frames, order (server.ts, KafkaConnections)
 *                     ├─ Produce, not transactional (schema rules checked here) ─▶ produce.ts ─▶ shards
 *                     ├─ Fetch, ListOffsets (committed reads by the thread's copy of the
 *                     │  partitions' transaction state; long-polls on its LiveWaiters) ─▶ shards
 *                     └─ everything else, a partition this thread's topic index does not know yet,
 *                        and a raw SASL token ─▶ main thread: dispatch ─▶ answer
 *
 * Auth: SASL runs on the main thread; each answer carries the connection's auth state after it,
 * which the thread keeps (auth.ts, ConnectionAccess), so a Produce it serves is checked against
 * the scope the connection authenticated with, as on the main thread.
 */
import { type Authenticator } from '../actors';
import { type Logger } from '../log';
import { type Tracing } from '../tracing';
import { type ShardClient } from '../shards';
import { type KafkaContext, type LiveRegistry } from './context';
import { DecodedRequest, SERVED_APIS, countRequest, countsByApi, decodeRequest, refuseStaleToken, runRequest } from './dispatch';
import { type ProduceRequest } from './messages/produce';
import { type FetchRequest } from './messages/fetch';
import { type ListOffsetsRequest } from './messages/list-offsets';
import { type PartitionTxns, type TransactionCoordinator } from './txn';
import { accessOf, kafkaAuthenticator } from './auth';
import { lookupPartition } from './partitions';
import { TopicIndex } from './topics';
import { CONTROL_BIT, TRANSACTIONAL_BIT } from './txn/markers';
import { FramePool } from './frame-assembler';
import { type RecordValidation } from '../util/validation-rule';
import { type KafkaConnection, KafkaConnections, PendingResponse, type ResponseFrame } from './server';
import { type KafkaToMain, type KafkaToThread, type RelayedAnswer } from './thread-messages';

export interface KafkaFrontOptions {
  /** This thread's client of the shard workers. */
  shards: ShardClient;
  live: LiveRegistry;
  log: Logger;
  nodeId: number;
  /** `--auth required`: connections authenticate (on the main thread) before anything else. */
  auth: boolean;
  /** With `auth`: this thread's copy of the token records (null: auth off). */
  tokens: Authenticator | null;
  /** Largest request frame (bytes after the size prefix), as the main thread's listener. */
  maxFrameBytes: number;
  tracing: Tracing | null;
  /** Schema validation of produced records on this thread (registry/thread-validation.ts). */
  validation: RecordValidation;
  /** This thread's copy of the partitions' transaction state (gateway-thread.ts): Fetch and ListOffsets read committed data by it. */
  txns: PartitionTxns;
  /** To the main thread; a relayed frame's buffer is moved. */
  post(m: KafkaToMain, transfer: ArrayBuffer[]): void;
}

const PRODUCE_KEY = 0;
const FETCH_KEY = 1;
const LIST_OFFSETS_KEY = 2;

/** A part of the node only the main thread has (but `here`): a handler that reached the rest here is a bug, answered as one. */
function mainThreads<T extends object>(what: string, here: Partial<T> = {}): T {
  return new Proxy(here as T, {
    get: (target, key) => {
      if (Object.prototype.hasOwnProperty.call(target, key)) return (target as Record<string | symbol, unknown>)[key];
      throw new Error(`kafka: ${what} is the main thread's (a gateway thread serves Produce, Fetch and ListOffsets)`);
    },
  });
}

type Waiting = { resolve: (out: ResponseFrame | null | PendingResponse) => void; reject: (err: Error) => void; conn: KafkaConnection };

export class KafkaFront {
  readonly #o: KafkaFrontOptions;
  readonly #ctx: KafkaContext;
  readonly #connections: KafkaConnections;
  /** Relayed requests waiting for their answer, then (pending ones) for their response. */
  readonly #waiting = new Map<number, Waiting>();
  readonly #late = new Map<number, { resolve: (out: ResponseFrame | null) => void; reject: (err: Error) => void }>();
  #nextRid = 1;

  constructor(o: KafkaFrontOptions) {
    this.#o = o;
    const log = o.log.child({ module: 'kafka' });
    this.#ctx = {
      shards: o.shards,
      live: o.live,
      // This thread's own index of this node's streams (a single node: gateway threads take no Kafka connections in a cluster).
      topics: new TopicIndex(o.shards),
      log,
      nodeId: o.nodeId,
      advertised: () => {
        throw new Error("kafka: the advertised address is the main thread's");
      },
      groups: mainThreads('the group coordinator'),
      share: mainThreads('share groups'),
      // Only the partitions' state is here (a copy the main thread keeps current): what Fetch and ListOffsets read.
      txns: mainThreads<TransactionCoordinator>('the transaction coordinator', { parts: o.txns }),
      apiVersions: SERVED_APIS,
      // SASL runs on the main thread (relayed): a connection's scope and token come back with its
      // answers. This thread checks the token again before each request, against its copy of the
      // token records, which a revocation reaches before it is answered.
      authenticate: o.tokens === null ? null : kafkaAuthenticator(o.tokens),
      topicConfigs: null,
      validation: o.validation,
      cluster: null,
      requestCounts: Array.from({ length: 128 }, () => 0),
      tracing: o.tracing,
    };
    const framePool = new FramePool();
    o.shards.onReturnedBuffer((ab) => framePool.put(ab));
    this.#connections = new KafkaConnections({
      maxFrameBytes: o.maxFrameBytes,
      framePool,
      log,
      handle: (frame, conn) => this.#handle(frame, conn),
      closed: (conn) => o.post({ t: 'kafka-closed', conn: conn.id }, []),
      refusals: (report) => o.post({ t: 'kafka-refused', report }, []),
    });
  }

  /** A message of the main thread for the Kafka listener. */
  onMessage(m: KafkaToThread): void {
    switch (m.t) {
      case 'kafka-conn':
        // Said first: should this thread end from here on, the main thread must not close the descriptor a socket of its own may hold.
        this.#o.post({ t: 'kafka-taken', conn: m.conn }, []);
        try {
          return this.#connections.adoptDescriptor(m.fd, m.conn);
        } catch (err) {
          // A descriptor that is no socket any more (its peer gone in between is not this: that is a socket that closes).
          this.#ctx.log.warn({ conn: m.conn, err: (err as Error).message }, 'kafka connection handed to this thread could not be served');
          return this.#o.post({ t: 'kafka-closed', conn: m.conn }, []);
        }
      case 'kafka-res': {
        const w = this.#waiting.get(m.rid);
        if (w === undefined) return;
        this.#waiting.delete(m.rid);
        if (m.clientId !== null) w.conn.clientId = m.clientId;
        if (m.access !== null) Object.assign(accessOf(w.conn, true), m.access);
        if (m.answer.kind === 'pending') {
          w.resolve(new PendingResponse(new Promise((resolve, reject) => this.#late.set(m.rid, { resolve, reject }))));
          return;
        }
        return settle(m.answer, w.resolve, w.reject);
      }
      case 'kafka-late': {
        const l = this.#late.get(m.rid);
        if (l === undefined) return;
        this.#late.delete(m.rid);
        return settle(m.answer, l.resolve, l.reject);
      }
    }
  }

  /** Requests served on this thread since start, by API name (the node's svc_kafka_requests_total adds them). */
  requests(): Array<{ api: string; count: number }> {
    return countsByApi(this.#ctx.requestCounts);
  }

  /** Take no more connections; wait (up to `graceMs`) for requests in progress, then close every connection. */
  close(graceMs?: number): Promise<void> {
    return this.#connections.close(graceMs);
  }

  async #handle(frame: Buffer, conn: KafkaConnection): Promise<ResponseFrame | null | PendingResponse> {
    const access = accessOf(conn, this.#o.auth);
    // A token revoked since SASL is refused here too, from this thread's copy of the token records.
    const checking = refuseStaleToken(this.#ctx, access, frame);
    if (checking !== undefined) await checking;
    const key = frame.length < 8 ? -1 : frame.readInt16BE(0);
    if (access.rawTokenNext || (key !== PRODUCE_KEY && key !== FETCH_KEY && key !== LIST_OFFSETS_KEY)) return this.#relay(frame, conn);
    const d = decodeRequest(this.#ctx, frame, conn);
    if (!(d instanceof DecodedRequest)) return d;
    const here = key === PRODUCE_KEY ? await this.#servesProduce(d.req as ProduceRequest) : key === FETCH_KEY ? await this.#servesFetch(d.req as FetchRequest, d.version) : await this.#servesListOffsets(d.req as ListOffsetsRequest);
    if (!here) return this.#relay(frame, conn);
    countRequest(this.#ctx, frame);
    return runRequest(this.#ctx, d, frame.length, conn);
  }

  /**
   * Whether this thread serves a Produce: not transactional (the coordinator admits a transaction's
   * partitions), no control batch (refused there, as on the main thread), every partition known
   * here. Anything else goes to the main thread whole.
   */
  async #servesProduce(req: ProduceRequest): Promise<boolean> {
    if (req.transactionalId != null) return false;
    for (const t of req.topicData) {
      for (const p of t.partitionData) {
        const r = p.records;
        if (r !== null && r.length >= 23 && (r.readInt16BE(21) & (TRANSACTIONAL_BIT | CONTROL_BIT)) !== 0) return false;
        if (!(await this.#known(t.name, undefined, p.index))) return false;
      }
    }
    return true;
  }

  /** Whether this thread serves a Fetch: every partition it names is known here (by name, or by topic id from v13). */
  async #servesFetch(req: FetchRequest, version: number): Promise<boolean> {
    const byId = version >= 13;
    for (const t of req.topics) for (const p of t.partitions) if (!(await this.#known(byId ? undefined : t.topic, byId ? t.topicId : undefined, p.partition))) return false;
    return true;
  }

  /** Whether this thread serves a ListOffsets: every partition it names is known here. */
  async #servesListOffsets(req: ListOffsetsRequest): Promise<boolean> {
    for (const t of req.topics) for (const p of t.partitions) if (!(await this.#known(t.name, undefined, p.partitionIndex))) return false;
    return true;
  }

  /**
   * A partition this thread's topic index knows. One it does not know goes to the main thread,
   * whose index also knows the topics it created a moment ago (this one finds them at its next
   * rebuild), and which answers a missing one.
   */
  async #known(name: string | undefined, topicId: string | undefined, partition: number): Promise<boolean> {
    try {
      return (await lookupPartition(this.#ctx, name, topicId, partition)).stream !== null;
    } catch {
      return false;
    }
  }

  /** The main thread runs this frame; its answer comes back in a `kafka-res` message. */
  #relay(frame: Buffer, conn: KafkaConnection): Promise<ResponseFrame | null | PendingResponse> {
    const rid = this.#nextRid++;
    const copy = new Uint8Array(frame.length);
    copy.set(frame);
    return new Promise((resolve, reject) => {
      this.#waiting.set(rid, { resolve, reject, conn });
      this.#o.post({ t: 'kafka-req', rid, conn: conn.id, remote: conn.remote, clientId: conn.clientId, frame: copy }, [copy.buffer]);
    });
  }
}

function settle(a: Exclude<RelayedAnswer, { kind: 'pending' }>, resolve: (out: ResponseFrame | null) => void, reject: (err: Error) => void): void {
  if (a.kind === 'frame') return resolve(a.frame === null ? null : Buffer.from(a.frame.buffer, a.frame.byteOffset, a.frame.byteLength));
  // As the main thread refused it: the connection closes with its reason in the log line.
  const err = new Error(a.error);
  err.name = a.errorName;
  reject(err);
}
