/**
 * Where live reads (`live=long-poll`, `live=sse`) wait: on the gateway thread, on tail events the
 * shards send, so a waiting reader costs no worker time (ARCHITECTURE.md, "Live reads").
 *
 *   first live reader of a stream ──join──▶ StreamWatch ──ShardClient.watch(name)──▶ shard
 *                                               ▲                                     │ after each applied group
 *                                               └──── tail events (watched streams) ◀─┘ commit, seal, trim, delete
 *   tail moved ──▶ wake every waiter whose position it passed ──▶ one shared read per position
 *
 * - A stream is watched while it has live readers, and for WATCH_LINGER_MS after the last one
 *   leaves (a long-poller re-polls at once; re-watching for every poll would cost a worker round
 *   trip each time). The sweep that unwatches idle streams runs every WATCH_LINGER_MS.
 * - A wake is one-shot: the reader reads, answers or writes, and waits again at its new position.
 * - Readers woken by one event at one position share one read (`read()` coalesces identical reads
 *   in flight), so 10,000 SSE readers at the tail cost one worker read per tail move. Sharing a
 *   read that was issued a moment before a request arrived is safe for live reads only: a reader
 *   that misses a record that way still waits at a position the stream's known tail has passed,
 *   so it is woken at once and reads again.
 * - The known tail is never behind an acknowledged append: a shard sends an append's reply and its
 *   tail event in the same message, reply first, and the event is handled before the reply's
 *   continuation can answer the client. So a long-poll at the known tail may wait without a read.
 */
import { type BucketCounts, type ReadParams, type ReadResult, type TailEvent, observeBucket } from '../../shards';

/** What the registry needs of the data plane (ShardClient fits). */
export interface LiveShards {
  watch(name: string): Promise<TailEvent>;
  unwatch(name: string): Promise<void>;
  read(p: ReadParams): Promise<ReadResult>;
  onTail(listener: (events: TailEvent[]) => void): void;
}

/** A reader waiting for the tail to pass its position. */
export interface Waiter {
  /** The next seq the reader wants. */
  readonly seq: number;
  /** The stream it is reading: a tail of another id means its stream was deleted. */
  readonly streamId: number;
  /** Called once, after the waiter was removed: the tail passed `seq`, or the stream was sealed or deleted. */
  wake(): void;
  /**
   * Woken by the durable tail itself (a Kafka fetch, whose isolation level is its own). Every
   * other reader sees committed data only: it is woken when the stream's stable tail (the
   * last stable offset of Kafka transactions, `stableTail`) passes its seq.
   */
  readonly uncommitted?: boolean;
}

/** A live read in progress, known to the registry so that shutdown can end it and SSE can be kept alive. */
export interface LiveReader {
  /** What kind of live read this is, for the live readers gauge (docs/metrics.md). */
  readonly kind?: 'sse' | 'long_poll';
  /** The node is stopping: answer or end now. */
  shutdown(): void;
  /** Called every `keepAliveMs`. */
  keepAlive?(): void;
}

export interface LiveOptions {
  /** How long a long-poll waits before answering 204 (ms). */
  longPollTimeoutMs: number;
  /** Interval of SSE keep-alive comments (ms). */
  keepAliveMs?: number;
  /** How long a stream stays watched after its last live reader left (ms). */
  lingerMs?: number;
}

/** SSE keep-alive comment interval: below the 30–60 s idle timeouts common in proxies and load balancers. */
export const SSE_KEEP_ALIVE_MS = 15_000; // 15 s
/** Record bytes per SSE read (the `bytes` budget of a page), on both listeners; well under the Svc reader's buffer bound. */
export const SSE_PAGE_BYTES = 256 * 1024; // 256 KiB
/** A stream stays watched this long after its last live reader left. */
export const WATCH_LINGER_MS = 5_000; // 5 s
/**
 * Deferred deliveries run at most this many per event-loop turn. Each is a socket write, which
 * cost 12–20 µs on the 2-core reference machine (a loopback send wakes the reader), so a slice
 * holds the gateway thread for ~10 ms rather than 150+ ms for 10,000 readers at once.
 */
export const DELIVERY_SLICE = 500;

/** Bounds of the fan-out lag histogram (seconds): from 100 µs (one slice, page cached) to 5 s. */
export const FANOUT_LAG_BOUNDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One watched stream: its tail as last reported, and who waits on it. */
export class StreamWatch {
  readonly name: string;
  /** The tail as last reported; null until the first watch reply or event arrives. */
  tail: TailEvent | null = null;
  /** Frame bytes appended to the stream since the watch began (sum of the events' `bytes`). */
  bytes = 0;
  /** Live readers holding this watch. */
  refs = 0;
  /** When `refs` last dropped to 0 (ms). */
  idleSince = 0;
  readonly waiters = new Set<Waiter>();
  /** Called on every tail move; paused SSE readers use it to see how far they fall behind. */
  readonly movers = new Set<() => void>();
  /** Pages read since the tail last moved, by position and shape: still current, so reusable. */
  readonly pages = new Map<string, ReadResult>();

  constructor(name: string) {
    this.name = name;
  }

  /** Bumped when what readers of committed data may see changed without a tail move (a Kafka transaction ended). */
  visibility = 0;
  /** The stable tail (seqs below it are committed), or null when no transaction is open; see LiveWaiters.setStableTail. */
  stable: (name: string) => number | null = () => null;

  /** Whether the waiter has something to do now: records past its seq, a seal, or its stream gone. */
  due(w: Waiter): boolean {
    const t = this.tail;
    if (t === null) return false;
    const stable = w.uncommitted === true ? null : this.stable(this.name);
    const next = stable === null ? t.nextSeq : Math.min(stable, t.nextSeq);
    return t.deleted || t.streamId !== w.streamId || next > w.seq || t.closed;
  }
}

export class LiveWaiters {
  readonly longPollTimeoutMs: number;
  /**
   * Fan-out lag of SSE deliveries (docs/metrics.md, svc_live_fanout_lag_seconds): from a reader's
   * wake (the tail event reaching the gateway) to its records being written, so the slices a large
   * fan-out is delivered in and the shared read show here. Plain numbers, read at scrape time.
   */
  readonly fanoutLag: BucketCounts = { counts: new Array<number>(FANOUT_LAG_BOUNDS.length + 1).fill(0), sum: 0, count: 0 };
  readonly #shards: LiveShards;
  readonly #streams = new Map<string, StreamWatch>();
  readonly #readers = new Set<LiveReader>();
  /** Reads in flight by stream, position and shape, shared by every live reader that asks for the same one. */
  readonly #reads = new Map<string, Promise<ReadResult>>();
  readonly #lingerMs: number;
  readonly #timers: NodeJS.Timeout[];
  #stable: (name: string) => number | null = () => null;
  #closed = false;
  #deferred: Array<() => void> = [];
  #deferredAt = 0;
  #draining = false;

  constructor(shards: LiveShards, o: LiveOptions) {
    this.#shards = shards;
    this.longPollTimeoutMs = o.longPollTimeoutMs;
    this.#lingerMs = o.lingerMs ?? WATCH_LINGER_MS;
    shards.onTail((events) => {
      for (const e of events) {
        const w = this.#streams.get(e.name);
        if (w !== undefined) this.#apply(w, e);
      }
    });
    this.#timers = [
      setInterval(() => this.#sweep(), this.#lingerMs),
      setInterval(() => {
        for (const r of this.#readers) r.keepAlive?.();
      }, o.keepAliveMs ?? SSE_KEEP_ALIVE_MS),
    ];
    for (const t of this.#timers) t.unref();
  }

  /** True once shutdown() ran: live reads answer at once. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Streams watched now (tests, metrics). */
  get watchedStreams(): number {
    return this.#streams.size;
  }

  /** Take a reference on a stream's watch; the first one starts watching. */
  join(name: string): StreamWatch {
    let w = this.#streams.get(name);
    if (w === undefined) {
      const watch = new StreamWatch(name);
      watch.stable = this.#stable;
      w = watch;
      this.#streams.set(name, watch);
      this.#shards.watch(name).then(
        (t) => this.#apply(watch, t),
        // The shard could not answer (storage failure): wake everyone; their reads report the error.
        () => this.#wakeAll(watch),
      );
    }
    w.refs++;
    return w;
  }

  leave(w: StreamWatch): void {
    if (--w.refs === 0) w.idleSince = Date.now();
  }

  /** Wait until the waiter is due; wakes it at once (synchronously) when it already is. */
  wait(w: StreamWatch, waiter: Waiter): void {
    if (w.due(waiter)) waiter.wake();
    else w.waiters.add(waiter);
  }

  cancel(w: StreamWatch, waiter: Waiter): void {
    w.waiters.delete(waiter);
  }

  /** A read for a live reader, shared with every identical read in flight (see the header for why that is safe). */
  read(p: ReadParams): Promise<ReadResult> {
    const key = `${readKey(p)}/${p.name}`;
    let r = this.#reads.get(key);
    if (r === undefined) {
      const read = this.#shards.read(p);
      r = read;
      this.#reads.set(key, read);
      const done = (): void => {
        if (this.#reads.get(key) === read) this.#reads.delete(key);
      };
      read.then(done, done);
    }
    return r;
  }

  /**
   * A page for a reader of watched stream `w`: the page already read at this position since the
   * tail last moved (it is still current: nothing newer is known), else a shared read. Readers
   * served in slices (defer) thus get the stream as it is when their turn comes, not as it was
   * when they were woken, at one read per position per tail move.
   */
  page(w: StreamWatch, p: ReadParams): Promise<ReadResult> {
    const key = readKey(p);
    const hit = w.pages.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const version = w.tail?.version ?? -1;
    const visibility = w.visibility;
    return this.read(p).then((r) => {
      if ((w.tail?.version ?? -1) === version && w.visibility === visibility) w.pages.set(key, r);
      return r;
    });
  }

  /**
   * The known tail of a watched stream as a reader of committed data sees it: `nextSeq` no further
   * than the stable tail (null when it is not watched, or its tail is not known yet).
   */
  tailOf(name: string): TailEvent | null {
    const t = this.#streams.get(name)?.tail ?? null;
    const stable = t === null ? null : this.#stable(name);
    return t === null || stable === null || stable >= t.nextSeq ? t : { ...t, nextSeq: stable };
  }

  /**
   * Where a stream's committed data ends while a Kafka transaction is open on it (its last stable
   * offset), or null; node.ts hands in the Kafka listener's (docs/kafka.md, "Transactions").
   */
  setStableTail(fn: (name: string) => number | null): void {
    this.#stable = fn;
    for (const w of this.#streams.values()) w.stable = fn;
  }

  /** A stream's tail `nextSeq` as readers of committed data see it: no further than its stable tail. */
  stableTail(name: string, nextSeq: number): number {
    const stable = this.#stable(name);
    return stable === null ? nextSeq : Math.min(stable, nextSeq);
  }

  /**
   * What readers of committed data may see of `name` changed without a tail move (a transaction
   * ended after its marker was appended): pages read before are stale, and waiters the stable
   * tail now passed are woken.
   */
  visibilityChanged(name: string): void {
    const w = this.#streams.get(name);
    if (w === undefined) return;
    w.visibility++;
    w.pages.clear();
    // Reads in flight were bounded by the old view: later readers must not share them.
    for (const key of this.#reads.keys()) if (key.endsWith(`/${name}`)) this.#reads.delete(key);
    this.#wakeDue(w);
  }

  /**
   * Run `fn` soon, in slices of DELIVERY_SLICE per event-loop turn, in the order given: a tail move
   * that reaches 10,000 SSE readers then costs the gateway many short turns, between which it goes
   * on serving requests (appends, other streams), instead of one long one.
   */
  defer(fn: () => void): void {
    this.#deferred.push(fn);
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(this.#drain);
    }
  }

  readonly #drain = (): void => {
    const q = this.#deferred;
    const end = Math.min(q.length, this.#deferredAt + DELIVERY_SLICE);
    while (this.#deferredAt < end) {
      const fn = q[this.#deferredAt++]!;
      try {
        fn();
      } catch {
        // A delivery that throws must not stall the others; readers handle their own errors.
      }
    }
    if (this.#deferredAt < q.length) {
      setImmediate(this.#drain);
      return;
    }
    this.#deferred = [];
    this.#deferredAt = 0;
    this.#draining = false;
  };

  /** An SSE reader woken at `wokenAt` (performance.now()) has written its records. */
  delivered(wokenAt: number): void {
    observeBucket(this.fanoutLag, FANOUT_LAG_BOUNDS, (performance.now() - wokenAt) / 1000);
  }

  /** Live readers now, by kind: counted at scrape time, so joining and leaving cost nothing more. */
  readers(): { sse: number; longPoll: number } {
    let sse = 0;
    for (const r of this.#readers) if (r.kind === 'sse') sse++;
    return { sse, longPoll: this.#readers.size - sse };
  }

  add(reader: LiveReader): void {
    this.#readers.add(reader);
  }

  remove(reader: LiveReader): void {
    this.#readers.delete(reader);
  }

  /** The node is stopping: every live read answers or ends now, and new ones answer at once. */
  shutdown(): void {
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    for (const r of [...this.#readers]) r.shutdown();
  }

  #apply(w: StreamWatch, t: TailEvent): void {
    // Watch replies resolve a turn after the events of their batch were delivered: keep the newest.
    if (w.tail !== null && t.version <= w.tail.version) return;
    w.tail = t;
    w.bytes += t.bytes;
    w.pages.clear();
    for (const m of w.movers) m();
    this.#wakeDue(w);
  }

  #wakeDue(w: StreamWatch): void {
    if (w.waiters.size === 0) return;
    const due: Waiter[] = [];
    for (const waiter of w.waiters) if (w.due(waiter)) due.push(waiter);
    for (const waiter of due) {
      w.waiters.delete(waiter);
      waiter.wake();
    }
  }

  #wakeAll(w: StreamWatch): void {
    const all = [...w.waiters];
    w.waiters.clear();
    for (const waiter of all) waiter.wake();
  }

  /** Stop watching streams that have had no live reader for the linger time. */
  #sweep(): void {
    const now = Date.now();
    for (const [name, w] of this.#streams) {
      if (w.refs > 0 || now - w.idleSince < this.#lingerMs) continue;
      this.#streams.delete(name);
      this.#shards.unwatch(name).catch(() => undefined);
    }
  }
}

function readKey(p: ReadParams): string {
  return `${p.seq}/${p.format}/${p.count}/${p.bytes}`;
}
