/**
 * A gateway thread (`--gateway-threads`, docs/config.md): a full front door of the protocol
 * listener (`--protocol svc` or `ds`) on a thread of its own. Loaded by the uWS engine's thread
 * (program/http/io-thread.ts) on the listener's shared port; the main thread keeps the actors and
 * what must have one owner.
 *
 *   client ──TCP (SO_REUSEPORT)──▶ gateway thread k: uWS app
 *      │ create, append, read, head, delete, long-poll, SSE (Durable Streams: and forks)  (serves)
 *      │    requestLog ▶ CORS ▶ shield ▶ auth guard (TokenReplica) ▶ Svc or Durable Streams handler
 *      │       └─ ShardClient over its own channels ──▶ every shard worker (replies, tail events)
 *      └─ everything else (Svc: list, /_schemas, /_streams, /_offsets, a create naming a schema;
 *         Durable Streams: the `__ds` subscription APIs; both: creates and deletes of a stream with
 *         a schema validation rule) ──▶ main thread's handler, as an I/O thread
 *
 * In a cluster, a thread serves only reads and appends of the streams placed on this node; the main
 * thread's owner check answers everything else (gateway/cluster/served-streams.ts).
 *
 * On a single node the thread also serves the Kafka connections the main thread's listener hands
 * it (kafka-wire/thread-front.ts): their Produce, Fetch and ListOffsets requests here, the rest
 * relayed to the main thread.
 * Its readers serve committed data only: it keeps a copy of the Kafka transactions' state.
 *
 * From the main thread, on the control channel (gateway-threads.ts): each worker's channel (and a
 * new one after a restart), a worker that stopped, every token record after each change
 * (acknowledged, so the admin API answers a revoke only once every thread refuses the token), every
 * schema validation rule after each change (acknowledged, so a rule is answered only once no thread
 * appends to its stream unchecked) and each registry change (acknowledged, so a deleted version is
 * answered only once no thread takes records under it), the schemas the thread asks for, in a
 * cluster the streams placed on this node after each change (acknowledged, so a moved stream's
 * copy is dropped only once every thread knows where it went),
 * the Kafka transactions' state after each change (acknowledged, so a transaction's first batch is
 * appended only once every thread hides it), Kafka connections and the answers to relayed Kafka
 * requests, and the drain at shutdown. To it: the acknowledgements, a Durable Streams thread's
 * stream events (appended, created, deleted) for the main thread's subscriptions, relayed Kafka
 * requests, and requests for schemas.
 */
import { type MessagePort } from 'node:worker_threads';
import { type VersionedToken, TokenReplica } from './actors';
import { SvcError } from './errors';
import {
  CorsPolicy,
  DS_CORS,
  type DsContext,
  type HttpRequest,
  InFlight,
  LiveWaiters,
  type RequestHandler,
  STREAM_BASE,
  SUBSCRIPTIONS_PREFIX,
  SVC_CORS,
  createDsHandler,
  createSvcHandler,
  dsInternalReply,
  guard,
  internalReply,
  parseCorsOrigins,
  parseStreamName,
  type GatewayFigures,
  RequestCounts,
  metered,
  requestLog,
  type ServedChange,
  ServedStreams,
  servedHere,
  shield,
  traced,
  withCors,
} from './gateway';
import { type LogFormat, type LogLevel, createLogger } from './log';
import { PortLinks, type Schemas, ShardClient, type WorkerDown } from './shards';
import { type LocalGateway } from './program/http/engine';
import { type Config } from './config';
import { type Tracing, type TracingOptions } from './tracing';
import { type DecoderSource, ThreadValidation } from './registry';
import { type Outcome } from './registry/types';
import { type ValidationRule } from './util/validation-rule';
import { nameThread } from './util/libc';
import { KafkaFront, type KafkaToMain, type KafkaToThread, PartitionTxns, type PartitionTxnState, isKafkaToThread } from './kafka-wire';

/** What a gateway thread starts with. */
export interface GatewayThreadData {
  /** The listener's protocol (`--protocol`): the Svc API or Durable Streams. */
  protocol: 'svc' | 'ds';
  /** Durable Streams: an SSE response ends after this long (`--sse-reconnect-ms`). */
  sseReconnectMs: number;
  /** Durable Streams: the subscription APIs are on (the thread posts its stream events to them). */
  dsSubscriptions: boolean;
  workers: number;
  shardCount: number;
  limits: Config['limits'];
  longPollTimeoutMs: number;
  auth: boolean;
  corsOrigins: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** The thread's name for the kernel (`svc-gw-<k>`): perf/scaling.js tells threads apart by it. */
  threadName: string;
  /**
   * A node of a cluster (`--metadata etcd://…`): the thread serves only the streams placed on this
   * node (gateway/cluster/served-streams.ts), and leaves the rest, creates and deletes to the main thread.
   */
  cluster: boolean;
  /** Request metrics are on (`--metrics`): the thread counts its requests and reports them at each scrape. */
  metrics: boolean;
  /**
   * Traces are on (`--otlp-traces-endpoint`): the thread makes its own Tracing (tracing.ts) with
   * these options and its name, and exports the spans of the requests it serves; null: off.
   */
  traces: Omit<TracingOptions, 'threadName'> | null;
  /**
   * The Kafka listener's connections are handed to the gateway threads (a single node): the thread
   * serves their Produce, Fetch and ListOffsets requests and relays the rest to the main thread (kafka-wire/thread-front.ts);
   * null: the main thread serves every Kafka connection.
   */
  kafka: { nodeId: number; maxFrameBytes: number } | null;
}

/** Main thread → gateway thread. */
export type ToGateway =
  | { t: 'linked'; w: number; port: MessagePort }
  | { t: 'down'; w: number; why: WorkerDown }
  | { t: 'tokens'; id: number; records: VersionedToken[] }
  /** Every schema validation rule, after each change: the thread checks its streams' appends itself (their creates and deletes go to the main thread). */
  | { t: 'validated'; id: number; rules: Array<[stream: string, rule: ValidationRule]> }
  /** A registry version changed: the subjects the thread knows per schema id are asked again (acknowledged: the registry answers the change only after). */
  | { t: 'registry-changed'; id: number }
  /** The answer to a `schema` request. */
  | { t: 'schema'; rid: number; source: Outcome<DecoderSource> | null; subjects: string[]; error: string | null }
  /** In a cluster: what changed in the streams placed on this node (the ones this thread serves). */
  | { t: 'served'; id: number; change: ServedChange }
  /**
   * Kafka transactions' state of these streams (open transactions, aborted ranges), after each
   * change and all of it at start: the thread's readers serve committed data only (docs/kafka.md,
   * "Transactions"). Acknowledged: a transaction's first batch is appended only once every thread has it.
   */
  | { t: 'txns'; id: number; states: Array<[stream: string, state: PartitionTxnState]> }
  /** A scrape: the thread answers with its figures (`figures`). */
  | { t: 'figures'; id: number }
  | { t: 'drain'; id: number }
  /** Everything the thread starts with has been sent (channels, tokens): it may take requests. */
  | { t: 'started' }
  /** The Kafka listener: a connection to serve, the answers to the requests it relayed. */
  | KafkaToThread;

/**
 * Gateway thread → main thread: the acknowledgement of a `tokens`, `validated`, `registry-changed`, `served`, `txns` or `drain` message;
 * its figures for a scrape;
 * a Durable Streams stream event for the subscriptions (`path`: the stream's name without its `/`).
 */
export type FromGateway =
  | { t: 'ack'; id: number }
  /** Schema `id` for the thread's record checks (registry/thread-validation.ts): its source to compile (`withDecoder`) and its subjects. */
  | { t: 'schema'; rid: number; id: number; withDecoder: boolean }
  | { t: 'figures'; id: number; figures: GatewayFigures }
  | { t: 'ds-changed'; streams: Array<[path: string, tailOffset: string]> }
  | { t: 'ds-deleted'; path: string }
  /** The Kafka listener: a request for the main thread, a connection closed. */
  | KafkaToMain;

/**
 * How often a Durable Streams thread sends its stream events to the main thread's subscriptions
 * at most (a wake comes this much later). Each message wakes the main thread, which is otherwise
 * idle under a stream load: perf/scaling.js DS1 with 2 threads put the main thread's CPU per
 * append at 4.7 µs with a message per append, 2.8 µs with one per turn of the thread's loop, 1.7 µs
 * every 1 ms and 1.0 µs every 5 ms, against 0.2 µs with the subscriptions off.
 */
const DS_EVENTS_EVERY_MS = 5;

/** At shutdown, how long a thread waits for its Kafka connections' requests in progress (as the main thread's listener). */
const KAFKA_DRAIN_MS = 5_000;

/** The paths a gateway thread leaves to the main thread: the list and the reserved `_` names. */
function mainThreadPath(path: string): boolean {
  return path === '/' || path.startsWith('/_');
}

export async function startGateway(raw: unknown, control: MessagePort): Promise<LocalGateway> {
  const data = raw as GatewayThreadData;
  nameThread(data.threadName);
  const log = createLogger(data.logLevel, undefined, data.logFormat === 'auto' ? 'json' : data.logFormat);
  const links = new PortLinks(data.workers);
  const shards = ShardClient.overLinks(links, data.shardCount);
  const live = new LiveWaiters(shards, { longPollTimeoutMs: data.longPollTimeoutMs });
  const tokens = new TokenReplica();
  const inFlight = new InFlight();
  // Schema validation: the rules from the main thread, schemas asked of it as records need them.
  const asked = new Map<number, { resolve: (answer: { source: Outcome<DecoderSource> | null; subjects: string[] }) => void; reject: (err: Error) => void }>();
  let nextAsk = 1;
  const validation = new ThreadValidation((id, withDecoder) => {
    const rid = nextAsk++;
    return new Promise((resolve, reject) => {
      asked.set(rid, { resolve, reject });
      control.postMessage({ t: 'schema', rid, id, withDecoder } satisfies FromGateway);
    });
  });
  const served = data.cluster ? new ServedStreams() : null;
  const counts = data.metrics ? new RequestCounts() : null;
  // Readers here serve committed data only, as on the main thread (node.ts): a copy of its Kafka transactions' state.
  const txns = new PartitionTxns(new Map());
  shards.setReadVisibility((name, from) => txns.visibility(name, from));
  live.setStableTail((name) => txns.stableSeq(name));
  txns.onEnded((name) => live.visibilityChanged(name));
  let started: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  /** Set below, before the thread takes a request; null with traces off. */
  let tracing: Tracing | null = null;
  /** The Kafka connections' front, made once tracing is set (below); messages for it wait until then. */
  let kafka: KafkaFront | null = null;
  const early: KafkaToThread[] = [];
  control.on('message', (m: ToGateway) => {
    if (isKafkaToThread(m)) {
      if (kafka === null) early.push(m);
      else kafka.onMessage(m);
      return;
    }
    switch (m.t) {
      case 'started':
        return started();
      case 'linked':
        return links.linked(m.w, m.port);
      case 'down':
        return links.down(m.w, m.why);
      case 'tokens':
        tokens.set(m.records);
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'validated':
        validation.setRules(m.rules);
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'registry-changed':
        validation.registryChanged();
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'schema': {
        const waiting = asked.get(m.rid);
        asked.delete(m.rid);
        if (m.error !== null) return waiting?.reject(new Error(m.error));
        return waiting?.resolve({ source: m.source, subjects: m.subjects });
      }
      case 'served':
        served?.apply(m.change);
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'txns':
        for (const [stream, state] of m.states) txns.apply(stream, state);
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'figures':
        return control.postMessage({ t: 'figures', id: m.id, figures: { requests: counts?.all() ?? [], appended: shards.appended, liveReaders: live.readers(), kafkaRequests: kafka?.requests() ?? [] } } satisfies FromGateway);
      case 'drain': {
        // As the node's close: new requests are refused, live reads answer now, in-flight ones finish.
        const drained = inFlight.drain();
        live.shutdown();
        // Kafka connections: their requests in progress are answered (the main thread's listener
        // closes beside this, answering the group waits it holds), then they close.
        void Promise.all([drained, kafka?.close(KAFKA_DRAIN_MS)]).then(async () => {
          await shards.close();
          links.close();
          // The spans still queued go out (2 s at most: Tracing.close).
          await tracing?.close();
          control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
        });
        return;
      }
    }
  });
  const isValidated = (name: () => string): boolean => validation.size > 0 && validation.has(name());
  const own = data.protocol === 'ds' ? dsFront(data, { shards, live, control, validation }, inFlight, isValidated) : svcFront(data, { shards, live, validation }, inFlight, isValidated);
  const front = served === null ? own : clusterFront(data, served, own);
  const guarded = data.auth ? guard(data.protocol, tokens, front.handler) : front.handler;
  const shielded = shield(data.protocol, guarded, log, data.protocol === 'ds' ? dsInternalReply : internalReply);
  const cors = new CorsPolicy(parseCorsOrigins(data.corsOrigins), data.protocol === 'ds' ? DS_CORS : SVC_CORS);
  const logged = requestLog(data.protocol, log, withCors(cors, shielded));
  // Traces as on the main thread (node.ts): the request span outside the request log, the hops
  // to the shard workers as its children. The OpenTelemetry libraries load only when traces are on.
  if (data.traces !== null) {
    const { Tracing } = await import('./tracing');
    tracing = new Tracing({ ...data.traces, threadName: data.threadName }, log);
    shards.setHopTracer(tracing);
  }
  const spanned = tracing === null ? logged : traced(data.protocol, tracing, logged);
  if (data.kafka !== null) {
    const front = new KafkaFront({
      shards, live, log, tracing, nodeId: data.kafka.nodeId, auth: data.auth, tokens: data.auth ? tokens : null, maxFrameBytes: data.kafka.maxFrameBytes,
      validation,
      txns,
      post: (m, transfer) => control.postMessage(m satisfies FromGateway, transfer),
    });
    kafka = front;
    for (const m of early.splice(0)) front.onMessage(m);
  }
  // Counted as on the main thread (outermost: its 500s and the guard's 401s too); the main thread
  // sums every thread's counts into its /metrics at each scrape.
  const counted = counts === null ? spanned : metered(data.protocol, counts, spanned);
  await ready;
  return { serves: front.serves, handler: counted };
}

/** A listener's handler on this thread and the requests it serves here (the rest go to the main thread). */
interface Front {
  handler: RequestHandler;
  serves: (req: Omit<HttpRequest, 'body'>) => boolean;
}

/** `validated(name)`: the stream `name()` names has a schema validation rule (its create and delete go to the main thread). */
type IsValidated = (name: () => string) => boolean;

function svcFront(data: GatewayThreadData, o: { shards: ShardClient; live: LiveWaiters; validation: ThreadValidation }, inFlight: InFlight, validated: IsValidated): Front {
  return {
    handler: createSvcHandler({ shards: o.shards, limits: data.limits, live: o.live, schemas: MAIN_THREAD_SCHEMAS, offsets: null, validation: o.validation }, inFlight),
    // A create naming a schema checks the stream schemas, which the main thread holds; a validated
    // stream's create and delete keep its rule in the metadata store (a delete forgets it). Its
    // appends are checked here.
    serves: (req) => !mainThreadPath(req.path) && !(req.method === 'PUT' && req.headers['svc-schema'] !== undefined) && !(createOrDelete(req.method) && validated(() => streamOf(req.path, data.limits.maxStreamNameBytes))),
  };
}

function dsFront(data: GatewayThreadData, o: { shards: ShardClient; live: LiveWaiters; control: MessagePort; validation: ThreadValidation }, inFlight: InFlight, validated: IsValidated): Front {
  const post = (m: FromGateway): void => o.control.postMessage(m);
  // Stream events go to the main thread every DS_EVENTS_EVERY_MS at most, each stream with its
  // newest tail only (a wake needs the tail, not every step to it). A delete first sends what is
  // pending, so it follows them.
  const changed = new Map<string, string>();
  let flushing = false;
  const flush = (): void => {
    flushing = false;
    if (changed.size === 0) return;
    post({ t: 'ds-changed', streams: [...changed] });
    changed.clear();
  };
  const ctx: DsContext = {
    shards: o.shards,
    live: o.live,
    maxRecordBytes: data.limits.maxRecordBytes,
    maxStreamNameBytes: data.limits.maxStreamNameBytes,
    readBytes: data.limits.readMaxBytes,
    sseReconnectMs: data.sseReconnectMs,
    // The subscriptions are the main thread's: this thread tells them what changed.
    subscriptions: data.dsSubscriptions
      ? {
          handle: () => Promise.reject(new SvcError('internal', "the subscription APIs are the main thread's")),
          onStreamChanged: (path, tailOffset) => {
            changed.set(path, tailOffset);
            if (!flushing) {
              flushing = true;
              setTimeout(flush, DS_EVENTS_EVERY_MS);
            }
          },
          onStreamDeleted: (path) => {
            flush();
            post({ t: 'ds-deleted', path });
          },
        }
      : null,
    validation: o.validation,
  };
  return {
    handler: createDsHandler(ctx, inFlight),
    serves: (req) =>
      !req.path.startsWith(SUBSCRIPTIONS_PREFIX) && !(createOrDelete(req.method) && req.path.startsWith(STREAM_BASE + '/') && validated(() => streamOf(req.path.slice(STREAM_BASE.length), data.limits.maxStreamNameBytes))),
  };
}

/**
 * In a cluster: only reads and appends of the streams placed on this node are served here; the
 * main thread's owner check answers the rest (307, an open in progress, a node that is down), and
 * creates and deletes, which write placement rows. Inside the auth guard, as the owner check: only
 * an authorized request learns where a stream went.
 */
function clusterFront(data: GatewayThreadData, served: ServedStreams, own: Front): Front {
  const nameOf = (path: string): string => {
    if (data.protocol === 'svc') return mainThreadPath(path) ? '' : streamOf(path, data.limits.maxStreamNameBytes);
    return path.startsWith(STREAM_BASE + '/') ? streamOf(path.slice(STREAM_BASE.length), data.limits.maxStreamNameBytes) : '';
  };
  return {
    handler: servedHere(data.protocol, served, (req) => nameOf(req.path), own.handler),
    serves: (req) => req.method !== 'PUT' && req.method !== 'DELETE' && own.serves(req) && served.has(nameOf(req.path)),
  };
}

function createOrDelete(method: string): boolean {
  return method === 'PUT' || method === 'DELETE';
}

/** The stream a path names, or '' when it names none (the handler answers that with its error). */
function streamOf(path: string, maxBytes: number): string {
  try {
    return parseStreamName(path, maxBytes);
  } catch {
    return '';
  }
}

/** The schema registry stays on the main thread: the requests that use it go there (`serves`). */
const MAIN_THREAD_SCHEMAS: Schemas = {
  documents: () => [],
  has: () => {
    throw new SvcError('internal', 'the schema registry is the main thread\'s');
  },
  get: () => {
    throw new SvcError('internal', 'the schema registry is the main thread\'s');
  },
  put: () => Promise.reject(new SvcError('internal', 'the schema registry is the main thread\'s')),
  delete: () => Promise.reject(new SvcError('internal', 'the schema registry is the main thread\'s')),
  attach: () => undefined,
};
