/**
 * The main thread's side of the gateway threads (`--gateway-threads`, docs/config.md;
 * gateway-thread.ts is the threads' side). The protocol listener's uWS threads each load
 * gateway-thread.js; this gives each one its data and a control channel, links its ShardClient to
 * every shard worker (and again after a worker restarts), sends it every token record, the
 * validation rules, registry changes, the Kafka transactions' state and (in a cluster) the streams
 * placed on this node after each change and waits for its acknowledgement, answers its requests
 * for schemas and (Kafka connections it was handed) for the main thread's Kafka listener, asks
 * every thread for its request counts at each scrape, and drains it at shutdown before the workers close.
 * A thread that ends (its control channel closes) is dropped and logged: what waits for its
 * acknowledgement goes on without it, and its channels to the workers are closed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { type Tokens } from './actors';
import { type GatewayThreadData, type FromGateway, type ToGateway } from './gateway-thread';
import { type GatewayFigures, type ServedChange, type Subscriptions } from './gateway';
import { type GatewayThreadSpec } from './program/http/engine';
import { type ShardClient } from './shards';
import { type DecoderSource } from './registry';
import { type Outcome } from './registry/types';
import { type ValidationRule } from './util/validation-rule';

/** Schema `id` for a thread's record checks: its source to compile (`withDecoder`) and its subjects (registry/validation.ts, `schemaFor`). */
export type SchemaFor = (id: number, withDecoder: boolean) => Promise<{ source: Outcome<DecoderSource> | null; subjects: string[] }>;
import { type KafkaRelay, type KafkaThreads, type PartitionTxns, type RelayReply, isKafkaToMain } from './kafka-wire';

/**
 * V8's young generation of a gateway thread: as large as the main thread's (16 MiB semi-spaces)
 * instead of a worker's default. With the default, a thread serving appends page-faulted about
 * 0.7 times per request as V8 kept giving its new-space pages back and taking fresh ones, and
 * collected more often (more short-lived request objects promoted): ~10 µs of CPU per append the
 * main thread did not spend (perf/README.md, "Gateway threads"). Costs up to 48 MiB per thread.
 */
const GATEWAY_YOUNG_GENERATION_MB = 48; // MiB

/** How long a scrape waits for a gateway thread's figures (a busy thread answers within a turn of its loop). */
const FIGURES_WAIT_MS = 1_000;

interface Thread {
  /** Its name for the kernel and the logs (`svc-gw-<k>`). */
  name: string;
  port: MessagePort;
  unlink(): void;
  /** The Kafka connections it serves (ids), handed to it by the listener. */
  kafka: Set<number>;
  /**
   * Descriptors posted to it that it has not said it took (`kafka-taken`), by connection id: still
   * this thread's to close. A thread that ends with messages unread never takes them, and each
   * such descriptor held a client's TCP connection open, unread, for as long as the process ran.
   */
  untaken: Map<number, number>;
}

/** What a Durable Streams gateway thread's stream events go to: the main thread's subscriptions. */
type DsStreamEvents = Pick<Subscriptions, 'onStreamChanged' | 'onStreamDeleted'>;

/** Where the threads' side reports a thread that is gone. */
export interface GatewayThreadsLog {
  warn(o: object, m: string): void;
}

export class GatewayThreads implements KafkaThreads {
  /** The threads' names: `<prefix><k>` (`svc-gw-1`; `svc-gw-ds-1` for `--ds-listen`'s), at most 15 bytes for the kernel. */
  readonly #namePrefix: string;
  readonly #shards: ShardClient;
  readonly #tokens: Tokens | null;
  readonly #data: Omit<GatewayThreadData, 'threadName'>;
  readonly #log: GatewayThreadsLog;
  readonly #subscriptions: DsStreamEvents | null;
  /** The threads that are up (one whose control channel closed is dropped). */
  readonly #threads = new Set<Thread>();
  /** Each message sent to every thread: the threads that have not acknowledged it yet. */
  readonly #acks = new Map<number, { left: Set<Thread>; done: () => void }>();
  #nextId = 1;
  /** Every schema validation rule (the threads check appends themselves, and leave creates and deletes of those streams to this thread). */
  #rules: Array<[stream: string, rule: ValidationRule]> = [];
  /** The newest registry change sent: resolves once every thread has it. */
  #registrySent: Promise<void> = Promise.resolve();
  /** Schemas for the threads' record checks (registry/validation.ts, `schemaFor`); null: none asked yet. */
  #schemaFor: SchemaFor | null = null;
  /** The newest change of the served streams sent: resolves once every thread has it, and so every one before it. */
  #servedSent: Promise<void> = Promise.resolve();
  /** Scrapes waiting for the threads' figures, by message id. */
  readonly #figures = new Map<number, (thread: Thread, f: GatewayFigures) => void>();
  /** Each thread's figures as last sent (an ended thread's stay: its requests were answered). */
  readonly #lastFigures = new Map<Thread, GatewayFigures>();
  /** Draining at shutdown: the threads' channels close as they end, which is no news. */
  #stopping = false;
  /** The partitions' Kafka transaction state the threads' readers keep a copy of (null: not given yet). */
  #txns: PartitionTxns | null = null;
  /** The Kafka listener's side of the requests the threads relay (null: the threads take no Kafka connections). */
  #kafka: KafkaRelay | null = null;

  /**
   * `tokens` null: auth is off, the threads check nothing. `subscriptions`: the Durable Streams
   * subscriptions the threads' stream events go to (null: none, or a Svc listener). `namePrefix`:
   * the threads' names before their number.
   */
  constructor(shards: ShardClient, tokens: Tokens | null, data: Omit<GatewayThreadData, 'threadName'>, log: GatewayThreadsLog, subscriptions: DsStreamEvents | null = null, namePrefix = 'svc-gw-') {
    this.#namePrefix = namePrefix;
    this.#shards = shards;
    this.#tokens = tokens;
    this.#data = data;
    this.#log = log;
    this.#subscriptions = subscriptions;
    // A token issued or revoked is answered only once every thread has the new records.
    tokens?.onChange(() => this.#toAll((id) => ({ t: 'tokens', id, records: tokens.records() })));
  }

  /** What the listener's engine needs to start the threads (ListenOptions.gateway). */
  spec(): GatewayThreadSpec {
    return { module: path.join(__dirname, 'gateway-thread.js'), start: (k) => this.#start(k), youngGenerationMb: GATEWAY_YOUNG_GENERATION_MB };
  }

  #start(k: number): { data: unknown; port: MessagePort } {
    const { port1, port2 } = new MessageChannel();
    const post = (m: ToGateway, transfer: MessagePort[] = []): void => port1.postMessage(m, transfer);
    const { unlink } = this.#shards.linkClient({
      port: (w, p) => post({ t: 'linked', w, port: p }, [p]),
      down: (w, why) => post({ t: 'down', w, why }),
    });
    if (this.#tokens !== null) post({ t: 'tokens', id: 0, records: this.#tokens.records() });
    post({ t: 'validated', id: 0, rules: this.#rules });
    if (this.#txns !== null) post({ t: 'txns', id: 0, states: this.#txns.streams().map((st) => [st, this.#txns!.state(st)]) });
    post({ t: 'started' });
    const thread: Thread = { name: `${this.#namePrefix}${k + 1}`, port: port1, unlink, kafka: new Set(), untaken: new Map() };
    const reply: RelayReply = (m, transfer) => port1.postMessage(m satisfies ToGateway, transfer);
    port1.on('message', (m: FromGateway) => {
      if (isKafkaToMain(m)) {
        if (m.t === 'kafka-taken') {
          thread.untaken.delete(m.conn);
          return;
        }
        if (m.t === 'kafka-closed') thread.kafka.delete(m.conn);
        this.#kafka?.onMessage(m, reply);
      } else if (m.t === 'ack') this.#acked(thread, m.id);
      else if (m.t === 'schema') void this.#schema(port1, m.rid, m.id, m.withDecoder);
      else if (m.t === 'figures') this.#figures.get(m.id)?.(thread, m.figures);
      else if (m.t === 'ds-changed') for (const [path, tail] of m.streams) this.#subscriptions?.onStreamChanged(path, tail);
      else if (m.t === 'ds-deleted') this.#subscriptions?.onStreamDeleted(m.path);
    });
    // The thread's end closes when it exits (a crash, or terminated): nothing it was sent will be
    // acknowledged, so it is dropped instead of awaited, and a token change still answers.
    port1.on('close', () => this.#gone(thread));
    // The main thread's own work must not wait on this channel to let the process exit.
    port1.unref();
    this.#threads.add(thread);
    return { data: { ...this.#data, threadName: thread.name } satisfies GatewayThreadData, port: port2 };
  }

  #acked(thread: Thread, id: number): void {
    const a = this.#acks.get(id);
    if (a === undefined || !a.left.delete(thread) || a.left.size > 0) return;
    this.#acks.delete(id);
    a.done();
  }

  #gone(thread: Thread): void {
    if (!this.#threads.delete(thread)) return;
    thread.unlink();
    // A channel delivers what the thread posted before it ended ahead of its close, so a descriptor
    // still untaken here was never taken (the thread says so before it opens a socket on one): no
    // socket of the thread's holds it, and it is closed here, once.
    for (const fd of thread.untaken.values()) closeQuietly(fd);
    thread.untaken.clear();
    // Its Kafka connections ended with it.
    for (const conn of thread.kafka) this.#kafka?.onMessage({ t: 'kafka-closed', conn }, () => undefined);
    thread.kafka.clear();
    if (!this.#stopping) this.#log.warn({ thread: thread.name, pending: [...this.#acks.values()].filter((a) => a.left.has(thread)).length }, 'gateway thread gone: its connections are closed and it is no longer waited for');
    for (const id of [...this.#acks.keys()]) this.#acked(thread, id);
  }

  /**
   * Every schema validation rule (docs/schema-registry.md): the threads check a validated stream's
   * appends themselves, with schemas asked of `schemaFor`, and leave its create and delete to this
   * thread, which keeps the rules. Resolves once every thread has them.
   */
  validated(rules: Array<[stream: string, rule: ValidationRule]>, schemaFor: SchemaFor): Promise<void> {
    this.#rules = rules;
    this.#schemaFor = schemaFor;
    return this.#toAll((id) => ({ t: 'validated', id, rules }));
  }

  /** A registry version changed: the threads ask again which subjects a schema id is under (`registrySynced` once they all know). */
  registryChanged(): void {
    this.#registrySent = this.#toAll((id) => ({ t: 'registry-changed', id }));
  }

  /** Resolves once every thread has every registry change sent so far: a registry write is answered only then (node.ts). */
  registrySynced(): Promise<void> {
    return this.#registrySent;
  }

  async #schema(port: MessagePort, rid: number, id: number, withDecoder: boolean): Promise<void> {
    try {
      if (this.#schemaFor === null) throw new Error('no schema validation on this node');
      port.postMessage({ t: 'schema', rid, ...(await this.#schemaFor(id, withDecoder)), error: null } satisfies ToGateway);
    } catch (err) {
      // The registry could not be read: the thread refuses these records now and asks again on the next batch.
      port.postMessage({ t: 'schema', rid, source: null, subjects: [], error: (err as Error).message } satisfies ToGateway);
    }
  }

  /**
   * The partitions' Kafka transaction state (docs/kafka.md, "Transactions"): every thread gets all
   * of it as it starts and each change after, so its readers serve committed data only. A change
   * resolves `txns.mirrored()` once every thread has acknowledged it.
   */
  txnStates(txns: PartitionTxns): void {
    this.#txns = txns;
    txns.copyTo((stream) => this.#toAll((id) => ({ t: 'txns', id, states: [[stream, txns.state(stream)]] })));
  }

  /**
   * In a cluster: what changed in the streams placed on this node (gateway/cluster/served-watch.ts,
   * which starts once the threads are up). The threads serve those themselves and leave every other
   * stream to this thread's owner check; a thread starts serving none.
   */
  served(c: ServedChange): Promise<void> {
    this.#servedSent = this.#toAll((id) => ({ t: 'served', id, change: c }));
    return this.#servedSent;
  }

  /**
   * Resolves once every thread has every change of the served streams sent so far. A stream's local
   * copy is dropped only then, so a thread that answers 404 from it knows where the stream went.
   */
  servedSynced(): Promise<void> {
    return this.#servedSent;
  }

  /**
   * For a scrape: every thread's request counts, acknowledged appends and live readers. A thread
   * that does not answer within FIGURES_WAIT_MS, or has ended, counts with the last figures it
   * sent (its live readers as none), so the node's counters never go back.
   */
  figures(): Promise<GatewayFigures[]> {
    const id = this.#nextId++;
    const waiting = new Set(this.#threads);
    const all = (): GatewayFigures[] => [...this.#lastFigures].map(([t, f]) => (this.#threads.has(t) ? f : { ...f, liveReaders: { sse: 0, longPoll: 0 } }));
    if (waiting.size === 0) return Promise.resolve(all());
    return new Promise<GatewayFigures[]>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#figures.delete(id);
        resolve(all());
      };
      const timer = setTimeout(done, FIGURES_WAIT_MS);
      this.#figures.set(id, (thread, f) => {
        if (!waiting.delete(thread)) return;
        this.#lastFigures.set(thread, f);
        if (waiting.size === 0) done();
      });
      for (const t of waiting) t.port.postMessage({ t: 'figures', id } satisfies ToGateway);
    });
  }

  /** The Kafka listener's relay: the threads' Kafka requests for this thread go to it (kafka-wire/relay.ts). */
  attach(relay: KafkaRelay): void {
    this.#kafka = relay;
  }

  /** The thread that takes the next Kafka connection: the one serving the fewest (null: none is up, or the threads take no Kafka connections). */
  taker(): ((fd: number, id: number) => void) | null {
    if (this.#kafka === null || this.#data.kafka === null || this.#stopping) return null;
    let best: Thread | null = null;
    for (const t of this.#threads) if (best === null || t.kafka.size < best.kafka.size) best = t;
    if (best === null) return null;
    const t = best;
    return (fd, conn) => {
      t.kafka.add(conn);
      t.untaken.set(conn, fd);
      t.port.postMessage({ t: 'kafka-conn', fd, conn } satisfies ToGateway);
    };
  }

  /** Kafka connections the threads serve now. */
  connections(): number {
    let n = 0;
    for (const t of this.#threads) n += t.kafka.size;
    return n;
  }

  /** How many threads are up (a thread whose channel closed is not counted). */
  get size(): number {
    return this.#threads.size;
  }

  /** New requests on every thread are refused, live reads answered, in-flight ones finished; then the threads' channels to the workers close. */
  async drain(): Promise<void> {
    this.#stopping = true;
    await this.#toAll((id) => ({ t: 'drain', id }));
    for (const t of this.#threads) t.unlink();
  }

  /** One message to every thread; resolves once each acknowledged it. */
  #toAll(make: (id: number) => ToGateway): Promise<void> {
    if (this.#threads.size === 0) return Promise.resolve();
    const id = this.#nextId++;
    return new Promise<void>((resolve) => {
      this.#acks.set(id, { left: new Set(this.#threads), done: resolve });
      for (const t of this.#threads) t.port.postMessage(make(id));
    });
  }
}

/** Close a descriptor nobody else holds; one already gone (EBADF) is no news. */
function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // nothing held it
  }
}
