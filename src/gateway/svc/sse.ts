/**
 * `GET /{stream}?live=sse`: a server-sent event stream (docs/protocol.md, "Live reads").
 *
 *   first read ──▶ 200 + events ──▶ wait at the tail ──wake──▶ shared read ──▶ write ──▶ wait …
 *                                        │ write() returned false: paused until the socket drains;
 *                                        │ stream bytes landing meanwhile count against SSE_MAX_BUFFERED_BYTES
 *                                        ▼
 *   sealed and read: `end` · deleted: `error` not_found · too slow: `error` slow_reader · node stopping: `control`
 *
 * Events: `record` (id = seq, data = the record in the JSON read format), `control` (caught up:
 * `{"next_seq", "up_to_date": true}`; node stopping: `{"next_seq", "shutting_down": true}`), `end`
 * (`{"next_seq", "closed": true}`, then the response ends) and `error` (`{"error", "message",
 * "next_seq"?}`, then the response ends). Comment lines `: keep-alive` every SSE_KEEP_ALIVE_MS.
 *
 * Pages are rendered as events on the shard worker (format `sse`), read once per position and
 * shared: every reader at the tail writes the same buffer.
 */
import { SvcError } from '../../errors';
import { type ReadParams, type ReadResult } from '../../shards';
import { type HttpRequest, type HttpResponse } from '../http/engine';
import { type LiveReader, type LiveWaiters, SSE_PAGE_BYTES, type StreamWatch, type Waiter, parseUint, toHttpError } from '../kit';
import { type SvcContext } from './context';
import { decodeCursor } from './cursor';

/**
 * How far a reader that stopped reading may fall behind before it is dropped: the bytes of the
 * page it has not taken plus the bytes appended to the stream since it stopped. What the node holds
 * for such a reader is at most one page: it reads no more for it until the socket drains.
 */
export const SSE_MAX_BUFFERED_BYTES = 1024 * 1024; // 1 MiB
// A dropped reader's final event waits for the socket to drain; a reader that takes nothing for the
// engine's write-idle timeout (60 s, src/program/http/README.md) is cut by the engine, which this
// stream sees as an abort. (A timer of its own, 10 s, cut readers that were still to read on a busy
// machine: test/protocol/live.test.ts, "a slow SSE reader is dropped ...".)

const SSE_HEADERS: ReadonlyArray<[string, string]> = [
  ['content-type', 'text/event-stream'],
  ['cache-control', 'no-cache'],
  // Proxies that buffer responses (nginx) would hold events back.
  ['x-accel-buffering', 'no'],
];

const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

function event(name: string, data: object): Buffer {
  return Buffer.from(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

const chunks = new WeakMap<ReadResult, Buffer>();

/**
 * A page as sent: its `record` events, then `end` when the stream is sealed and read, or `control`
 * when the page reaches the tail. Built once per read result, which every reader at that position shares.
 */
function chunkOf(r: ReadResult): Buffer {
  let c = chunks.get(r);
  if (c === undefined) {
    const last = r.closed
      ? event('end', { next_seq: r.nextSeq, closed: true })
      : r.upToDate
        ? event('control', { next_seq: r.nextSeq, up_to_date: true })
        : null;
    c = last === null ? r.body : r.body.length === 0 ? last : Buffer.concat([r.body, last]);
    chunks.set(r, c);
  }
  return c;
}

const SSE_PARAMS: ReadonlySet<string> = new Set(['seq', 'cursor', 'format', 'live']);

/**
 * Start position: `cursor`, else `seq` (a number or `now`), else `Last-Event-ID` + 1 (the id of the
 * last event a reconnecting client saw is that record's seq), else 0.
 */
export async function readSse(ctx: SvcContext, name: string, req: HttpRequest, res: HttpResponse, q: Map<string, string>): Promise<null> {
  for (const k of q.keys()) {
    if (!SSE_PARAMS.has(k)) throw new SvcError('invalid_parameter', k === 'count' || k === 'bytes' ? `${k} does not apply to live=sse` : `unknown query parameter ${k}`);
  }
  const format = q.get('format');
  if (format !== undefined && format !== 'json') throw new SvcError('invalid_parameter', 'live=sse sends records in the json format only');
  const rawSeq = q.get('seq');
  const cursor = q.get('cursor');
  if (rawSeq !== undefined && cursor !== undefined) throw new SvcError('invalid_parameter', 'give seq or cursor, not both');
  let seq = 0;
  let expectStreamId: number | null = null;
  const lastEventId = req.headers['last-event-id'];
  if (cursor !== undefined) {
    const c = decodeCursor(cursor);
    seq = c.seq;
    expectStreamId = c.streamId;
  } else if (rawSeq !== undefined) {
    seq = rawSeq === 'now' ? -1 : parseUint('seq', rawSeq)!;
  } else if (lastEventId !== undefined && lastEventId.trim() !== '') {
    seq = parseUint('Last-Event-ID', lastEventId.trim())! + 1;
  }
  const page = { count: ctx.limits.readDefaultCount, bytes: Math.min(SSE_PAGE_BYTES, ctx.limits.readDefaultBytes) };
  // Errors up to here are ordinary JSON error responses; from writeHead on they are `error` events.
  // Shared with other readers connecting at the same position (a burst of reconnections).
  const first = await ctx.live.read({ name, seq, ...page, format: 'sse' });
  if (expectStreamId !== null && expectStreamId !== first.streamId) {
    throw new SvcError('conflict', 'the cursor belongs to an earlier stream of this name (it was deleted and created again)');
  }
  if (res.aborted) return null;
  res.writeHead(200, SSE_HEADERS);
  return new SseReader(ctx.live, res, { name, ...page, format: 'sse', seq: first.nextSeq }, first).done;
}

/** waiting: for the tail to move · queued: woken, its turn in a delivery slice to come · reading: page on its way. */
type State = 'waiting' | 'queued' | 'reading' | 'paused' | 'ending' | 'done';

class SseReader implements Waiter, LiveReader {
  readonly kind = 'sse';
  seq: number;
  readonly streamId: number;
  /** Settles when the response has ended, whichever way. */
  readonly done: Promise<null>;
  readonly #live: LiveWaiters;
  readonly #res: HttpResponse;
  readonly #read: ReadParams;
  #watch: StreamWatch | null = null;
  #state: State = 'waiting';
  /** When the last wake came (performance.now()), for the fan-out lag. */
  #wokenAt = 0;
  #resolve: (v: null) => void = () => undefined;
  /** Bytes of the write that did not go through (0 while the socket keeps up). */
  #buffered = 0;
  /** The stream's byte count when the reader was paused. */
  #pausedAt = 0;
  #wroteSinceTick = false;

  constructor(live: LiveWaiters, res: HttpResponse, read: ReadParams, first: ReadResult) {
    this.#live = live;
    this.#res = res;
    this.#read = read;
    this.seq = first.nextSeq;
    this.streamId = first.streamId;
    this.done = new Promise((resolve) => (this.#resolve = resolve));
    res.onAborted(() => this.#finish());
    res.onWritable(() => this.#drained());
    const ok = this.#write(chunkOf(first));
    if (first.closed) {
      this.#end();
      return;
    }
    if (live.closed) {
      this.shutdown();
      return;
    }
    this.#watch = live.join(read.name);
    live.add(this);
    if (ok) live.wait(this.#watch, this);
    else this.#pause();
  }

  /** The tail passed `seq`, or the stream was sealed or deleted: read on, in turn. */
  wake(): void {
    if (this.#state !== 'waiting') return;
    this.#state = 'queued';
    this.#wokenAt = performance.now();
    // In slices: one tail move may reach thousands of readers (LiveWaiters.defer).
    this.#live.defer(this.#pull);
  }

  readonly #pull = (): void => {
    if (this.#state !== 'queued') return;
    this.#state = 'reading';
    this.#live
      .page(this.#watch!, { ...this.#read, seq: this.seq })
      .then(
        (r) => this.#deliver(r),
        (err: unknown) => {
          const e = JSON.parse(toHttpError(err).body) as { error: string; message: string };
          this.#fail({ error: e.error, message: e.message });
        },
      )
      // This runs after the handler's promise settled, outside the shield: a failure while
      // delivering must not become an unhandled rejection (which ends the process). The stream
      // has started, so all that is left is to close it; the client reconnects from its last id.
      .catch((err: unknown) => {
        process.emitWarning(`an SSE delivery failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, { code: 'SVC_SSE_FAILED' });
        this.#cut();
      });
  };

  shutdown(): void {
    if (this.#state === 'done') return;
    if (this.#state === 'ending') {
      this.#cut();
      return;
    }
    const ok = this.#write(event('control', { next_seq: this.seq, shutting_down: true }));
    // A reader that does not take its bytes must not hold the shutdown up.
    if (ok && this.#state !== 'paused') this.#end();
    else this.#cut();
  }

  keepAlive(): void {
    if (this.#state === 'waiting' && !this.#wroteSinceTick) this.#write(KEEP_ALIVE);
    this.#wroteSinceTick = false;
  }

  #deliver(r: ReadResult): void {
    if (this.#state !== 'reading') return; // ended while the read was in flight
    if (r.streamId !== this.streamId) {
      this.#fail({ error: 'not_found', message: `stream ${this.#read.name} was deleted` });
      return;
    }
    this.seq = r.nextSeq;
    const ok = this.#write(chunkOf(r));
    this.#live.delivered(this.#wokenAt);
    if (r.closed) {
      this.#end();
      return;
    }
    if (!ok) {
      this.#pause();
      return;
    }
    this.#state = 'waiting';
    this.#live.wait(this.#watch!, this);
  }

  #write(chunk: Buffer): boolean {
    this.#wroteSinceTick = true;
    const ok = this.#res.write(chunk);
    this.#buffered = ok ? 0 : this.#buffered + chunk.length;
    return ok;
  }

  #pause(): void {
    this.#state = 'paused';
    this.#pausedAt = this.#watch!.bytes;
    this.#watch!.movers.add(this.#onMove);
  }

  readonly #onMove = (): void => {
    if (this.#state !== 'paused') return;
    if (this.#watch!.bytes - this.#pausedAt + this.#buffered <= SSE_MAX_BUFFERED_BYTES) return;
    this.#fail({
      error: 'slow_reader',
      message: `the reader stopped taking events and fell more than ${SSE_MAX_BUFFERED_BYTES} bytes behind; reconnect with Last-Event-ID`,
      next_seq: this.seq,
    });
  };

  #drained(): void {
    this.#buffered = 0;
    if (this.#state === 'paused') {
      this.#watch!.movers.delete(this.#onMove);
      this.#state = 'waiting';
      this.#live.wait(this.#watch!, this);
    } else if (this.#state === 'ending') {
      this.#end();
    }
  }

  /** A final `error` event, then the end once the socket drains; a reader that takes nothing is left to the engine's write-idle timeout. */
  #fail(data: { error: string; message: string; next_seq?: number }): void {
    if (this.#state === 'done' || this.#state === 'ending') return;
    const wasPaused = this.#state === 'paused';
    const ok = this.#write(event('error', data));
    if (ok && !wasPaused) {
      this.#end();
      return;
    }
    this.#state = 'ending';
    this.#detach();
  }

  #end(): void {
    this.#res.end();
    this.#finish();
  }

  /** Close the connection without waiting for buffered bytes. */
  #cut(): void {
    this.#res.destroy();
    this.#finish();
  }

  /** Stop waiting and release the watch (a reader that is ending stays known, so shutdown can cut it); idempotent. */
  #detach(): void {
    const w = this.#watch;
    if (w === null) return;
    this.#watch = null;
    w.movers.delete(this.#onMove);
    this.#live.cancel(w, this);
    this.#live.leave(w);
  }

  #finish(): void {
    if (this.#state === 'done') return;
    this.#state = 'done';
    this.#detach();
    this.#live.remove(this);
    this.#resolve(null);
  }
}
