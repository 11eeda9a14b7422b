/**
 * A gateway thread (`--gateway-threads`, docs/config.md): a full front door of the Svc listener on
 * a thread of its own. Loaded by the uWS engine's thread (program/http/io-thread.ts) on the
 * listener's shared port; the main thread keeps the actors and what must have one owner.
 *
 *   client ──TCP (SO_REUSEPORT)──▶ gateway thread k: uWS app
 *      │ create, append, read, head, delete, long-poll, SSE  (serves)
 *      │    requestLog ▶ CORS ▶ shield ▶ auth guard (TokenReplica) ▶ Svc handler
 *      │       └─ ShardClient over its own channels ──▶ every shard worker (replies, tail events)
 *      └─ everything else (list, /_schemas, /_streams, /_offsets; a create naming a schema; writes
 *         to a stream with a schema validation rule) ──▶ main thread's handler, as an I/O thread
 *
 * From the main thread, on the control channel (gateway-threads.ts): each worker's channel (and a
 * new one after a restart), a worker that stopped, every token record after each change
 * (acknowledged, so the admin API answers a revoke only once every thread refuses the token), the
 * validated streams after each change (acknowledged, so a rule is answered only once no thread
 * appends to its stream unchecked), and the drain at shutdown.
 */
import { type MessagePort } from 'node:worker_threads';
import { type VersionedToken, TokenReplica } from './actors';
import { SvcError } from './errors';
import { CorsPolicy, type HttpRequest, InFlight, LiveWaiters, SVC_CORS, createSvcHandler, guard, internalReply, parseCorsOrigins, parseStreamName, requestLog, shield, withCors } from './gateway';
import { type LogFormat, type LogLevel, createLogger } from './log';
import { PortLinks, type Schemas, ShardClient, type WorkerDown } from './shards';
import { type LocalGateway } from './program/http/engine';
import { type Config } from './config';
import { nameThread } from './util/libc';

/** What a gateway thread starts with. */
export interface GatewayThreadData {
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
}

/** Main thread → gateway thread. */
export type ToGateway =
  | { t: 'linked'; w: number; port: MessagePort }
  | { t: 'down'; w: number; why: WorkerDown }
  | { t: 'tokens'; id: number; records: VersionedToken[] }
  /** The streams with a schema validation rule, after each change: their writes go to the main thread. */
  | { t: 'validated'; id: number; streams: string[] }
  | { t: 'drain'; id: number }
  /** Everything the thread starts with has been sent (channels, tokens): it may take requests. */
  | { t: 'started' };

/** Gateway thread → main thread: the acknowledgement of a `tokens` or `drain` message. */
export interface FromGateway {
  t: 'ack';
  id: number;
}

/** The paths a gateway thread leaves to the main thread: the list and the reserved `_` names. */
function mainThreadPath(path: string): boolean {
  return path === '/' || path.startsWith('/_');
}

export function startGateway(raw: unknown, control: MessagePort): Promise<LocalGateway> {
  const data = raw as GatewayThreadData;
  nameThread(data.threadName);
  const log = createLogger(data.logLevel, undefined, data.logFormat === 'auto' ? 'json' : data.logFormat);
  const links = new PortLinks(data.workers);
  const shards = ShardClient.overLinks(links, data.shardCount);
  const live = new LiveWaiters(shards, { longPollTimeoutMs: data.longPollTimeoutMs });
  const tokens = new TokenReplica();
  const inFlight = new InFlight();
  let validated = new Set<string>();
  let started: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  control.on('message', (m: ToGateway) => {
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
        validated = new Set(m.streams);
        return control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
      case 'drain': {
        // As the node's close: new requests are refused, live reads answer now, in-flight ones finish.
        const drained = inFlight.drain();
        live.shutdown();
        void drained.then(async () => {
          await shards.close();
          links.close();
          control.postMessage({ t: 'ack', id: m.id } satisfies FromGateway);
        });
        return;
      }
    }
  });
  const handler = createSvcHandler({ shards, limits: data.limits, live, schemas: MAIN_THREAD_SCHEMAS, offsets: null }, inFlight);
  const guarded = data.auth ? guard('svc', tokens, handler) : handler;
  const shielded = shield('svc', guarded, log, internalReply);
  const cors = new CorsPolicy(parseCorsOrigins(data.corsOrigins), SVC_CORS);
  const logged = requestLog('svc', log, withCors(cors, shielded));
  return ready.then(() => ({
    // A create naming a schema checks the registry, which the main thread holds; so do a validated
    // stream's appends, and its create and delete keep its rule (they forget it with the stream).
    serves: (req: Omit<HttpRequest, 'body'>) =>
      !mainThreadPath(req.path) && !(req.method === 'PUT' && req.headers['svc-schema'] !== undefined) && !(validated.size > 0 && isWrite(req.method) && validated.has(streamOf(req.path, data.limits.maxStreamNameBytes))),
    handler: logged,
  }));
}

function isWrite(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'DELETE';
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
