/**
 * The Kafka listener's sockets: the only file that uses node:net.
 *
 *   client ──TCP──▶ connection: [int32 size][request] frames ──▶ queue ──▶ handle(frame), one at a
 *                   (frame-assembler.ts: a large frame in               time, in arrival order
 *                    a buffer of its own, from the FramePool)
 *          ◀──────── responses written in request order (a request may have none: Produce acks=0)
 *
 * Requests of one connection run one after the other, as a Kafka broker runs them (it mutes a
 * channel while a request is in flight), so two Produce requests of one connection reach a
 * partition in the order they were sent. A request whose effects are ordered before its answer
 * is ready (a Produce whose appends were handed to the shards) answers with a PendingResponse:
 * the next request runs at once, up to MAX_PENDING of them, and responses still leave in
 * request order — a producer's pipelined batches share group commits instead of waiting for one
 * fdatasync each. A frame larger than `maxFrameBytes`, a negative size, or a
 * request the handler cannot parse closes the connection with a log line (at most one per client
 * address, reason and API key every 10 s; the next one says how many were suppressed).
 */
import * as net from 'node:net';
import { type Logger } from '../log';
import { listenError } from '../program/http';
import { FrameAssembler, type FramePool, type FrameSizeRefusal } from './frame-assembler';
import { dupFd } from '../util/libc';

export interface KafkaConnection {
  readonly id: number;
  readonly remote: string;
  /** Set by the handler once it parsed a request header. */
  clientId: string | null;
}

/** What the connections of a listener, or of a gateway thread, share. */
export interface KafkaConnectionOptions {
  /** Largest request frame (bytes after the size prefix). */
  maxFrameBytes: number;
  /** Buffers for large request frames, shared by the connections (frame-assembler.ts); null: new ones. */
  framePool?: FramePool | null;
  log: Logger;
  /** Answer one request frame (without its size prefix): the response frame with its size prefix, null for none, or a PendingResponse. Throws to close the connection. */
  handle(frame: Buffer, conn: KafkaConnection): Promise<ResponseFrame | null | PendingResponse>;
  /** A connection closed and runs no more requests (a gateway thread tells the main thread, which drops what it kept for it). */
  closed?(conn: KafkaConnection): void;
  /** Where refusal log lines go (`refusalLog`); absent: a rate limit of these connections' own. A gateway thread's go to the main thread's, so each is limited once per node. */
  refusals?: RefusalSink;
}

/** A refused request's log line, before the rate limit: `key` says which lines are repeats of one another. */
export interface RefusalReport {
  key: string;
  msg: string;
  fields: Record<string, unknown>;
}

export type RefusalSink = (r: RefusalReport) => void;

/** Refusal log lines to `log`, at most one per key every REFUSAL_LOG_WINDOW_MS; the next one says how many were suppressed. */
export function refusalLog(log: Logger): RefusalSink {
  const limit = new RefusalLog();
  return (r) => {
    const { log: now, suppressed } = limit.admit(r.key);
    if (now) log.warn({ ...r.fields, ...(suppressed > 0 ? { suppressedSinceLast: suppressed } : {}) }, r.msg);
  };
}

export interface KafkaServerOptions extends KafkaConnectionOptions {
  host: string;
  port: number;
  /**
   * Gateway threads (`--gateway-threads`): asked for each accepted connection, a taker that serves
   * it on another thread (given a duplicate of its descriptor and its connection id), or null to
   * serve it here. Absent: every connection is served here.
   */
  handOff?: () => ((fd: number, id: number) => void) | null;
}

export interface KafkaServerHandle {
  readonly port: number;
  /** Stop accepting connections; requests in progress go on. */
  stopAccepting(): void;
  /** Wait (up to `graceMs`) for requests in progress to be answered, then close every connection. */
  close(graceMs?: number): Promise<void>;
  /** Open client connections now. */
  connections(): number;
}

/** A refusal log line (same client address, reason and API key) is written at most once per this window; repeats are counted. */
const REFUSAL_LOG_WINDOW_MS = 10_000;

/**
 * Rate limit for the warn lines of refused requests: a client that reconnects and repeats a
 * request the listener cannot serve would otherwise write hundreds of identical lines a minute.
 */
class RefusalLog {
  readonly #seen = new Map<string, { at: number; suppressed: number }>();

  /** Whether to log now, and how many identical lines were suppressed since the last one. */
  admit(key: string, now = Date.now()): { log: boolean; suppressed: number } {
    const e = this.#seen.get(key);
    if (e !== undefined && now - e.at < REFUSAL_LOG_WINDOW_MS) {
      e.suppressed++;
      return { log: false, suppressed: 0 };
    }
    const suppressed = e?.suppressed ?? 0;
    this.#seen.set(key, { at: now, suppressed: 0 });
    if (this.#seen.size > 10_000) this.#seen.clear();
    return { log: true, suppressed };
  }
}

/** Reading pauses while this many requests of one connection wait to be handled (pipelining clients)… */
const MAX_QUEUED = 64;
/**
 * …or while they hold this many bytes. Why: a producer pipelines ~1 MB Produce requests, each in a
 * frame buffer of its own (FramePool); 64 of them queued per connection outgrew the pool, and every
 * buffer the pool could not give was a new megabyte of external memory that made V8 mark the
 * listener's whole heap every ~30 MB produced. The queue only has to keep the next requests ready
 * while MAX_PENDING of them wait for their group commit.
 */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024; // 4 MiB: four ~1 MB Produce requests
/** Responses of one connection that may be outstanding while its next requests run. */
const MAX_PENDING = 16;

/** A response frame: one buffer, or several written back to back (large record batches are not copied into the frame). */
export type ResponseFrame = Buffer | Buffer[];

/** A response that is not ready yet; the connection goes on with its next requests meanwhile. */
export class PendingResponse {
  constructor(readonly frame: Promise<ResponseFrame | null>) {}
}

type ConnectionOptions = KafkaConnectionOptions & { refusals: RefusalSink };

/** Kafka's Produce api key: the one request that still runs once its client hung up (Connection). The socket layer reads only a frame's first two bytes, so not the message module's. */
const PRODUCE_KEY = 0;

class Connection implements KafkaConnection {
  readonly id: number;
  readonly remote: string;
  clientId: string | null = null;
  readonly #socket: net.Socket;
  readonly #o: ConnectionOptions;
  readonly #log: Logger;
  readonly #frames: FrameAssembler;
  readonly #queue: Buffer[] = [];
  /** Bytes of the frames in #queue. */
  #queuedBytes = 0;
  #running = false;
  /** No more reads or writes: the socket closed, or is being destroyed. */
  #closed = false;
  /** Destroyed by this side: what is queued is dropped, Produce requests too. */
  #dropped = false;
  #endedSaid = false;
  #idle: (() => void) | null = null;
  /** Responses not written yet, in request order (each a frame or a pending one). */
  readonly #outbox: Array<{ frame: Buffer; out: Promise<ResponseFrame | null> }> = [];
  #flushing = false;

  readonly #onEnded: (c: Connection) => void;

  /**
   * `frames`: the assembler a socket made with `onread` reads into (`KafkaConnections.adoptDescriptor`); absent: the socket's 'data' chunks are pushed to a new one.
   * `onEnded`: the socket closed and nothing of the connection runs any more.
   */
  constructor(id: number, socket: net.Socket, o: ConnectionOptions, onEnded: (c: Connection) => void, frames?: FrameAssembler) {
    this.id = id;
    this.#onEnded = onEnded;
    this.#socket = socket;
    this.#o = o;
    this.#frames = frames ?? new FrameAssembler(o.maxFrameBytes, o.framePool ?? null);
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.#log = o.log.child({ conn: id, remote: this.remote });
    socket.setNoDelay(true);
    if (frames === undefined) socket.on('data', (d: Buffer) => this.#onData(d));
    socket.on('error', (err) => this.#log.debug({ err: err.message }, 'kafka connection error'));
    socket.on('close', () => {
      this.#closed = true;
      // The client hung up. A Produce it sent in full still runs (its response goes nowhere): with
      // acks=0 the client counted it delivered once written, as a Kafka broker runs the requests
      // it read before a connection closed. Every other request the client had no answer to is
      // dropped as if never sent: its client retries it on a new connection, and a JoinGroup or
      // long-poll Fetch of a gone client would only hold a group or a wait for nothing.
      this.#keepProduces();
      // While they run, a close of the listener waits for them (#run says idle and ended after).
      if (this.#running) return;
      this.#ended();
      this.#idle?.();
    });
  }

  /** Only the Produce requests (api key 0) stay queued. */
  #keepProduces(): void {
    let kept = 0;
    let bytes = 0;
    for (const f of this.#queue) {
      if (f.length >= 2 && f.readInt16BE(0) === PRODUCE_KEY) {
        this.#queue[kept++] = f;
        bytes += f.length;
      }
    }
    this.#queue.length = kept;
    this.#queuedBytes = bytes;
  }

  /** Closed and nothing left to run: said once, to whoever keeps state for the connection. */
  #ended(): void {
    if (this.#endedSaid) return;
    this.#endedSaid = true;
    this.#onEnded(this);
  }

  get busy(): boolean {
    return this.#running || this.#queue.length > 0 || this.#outbox.length > 0;
  }

  /** Resolves once no request is in progress (or the connection closed and runs none). */
  whenIdle(): Promise<void> {
    if (!this.busy || (this.#closed && !this.#running)) return Promise.resolve();
    return new Promise((resolve) => (this.#idle = resolve));
  }

  /** Closed by this side (a refused request, the listener closing): nothing queued runs. */
  destroy(): void {
    this.#closed = true;
    this.#dropped = true;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    this.#socket.destroy();
  }

  #fail(msg: string, fields: Record<string, unknown> = {}): void {
    const host = this.remote.slice(0, this.remote.lastIndexOf(':'));
    this.#o.refusals({ key: `${host}|${msg}|${String(fields['apiKey'])}|${String(fields['err'])}`, msg, fields: { conn: this.id, remote: this.remote, ...fields, clientId: this.clientId } });
    this.destroy();
  }

  #onData(d: Buffer): void {
    if (this.#closed) return;
    this.#took(this.#frames.push(d, this.#enqueue));
  }

  /** `n` bytes were read in place (net's `onread`, into the buffer `frames.readBuffer()` gave). */
  onRead(n: number): void {
    if (this.#closed) return;
    this.#took(this.#frames.received(n, this.#enqueue));
  }

  #took(refused: FrameSizeRefusal | null): void {
    if (refused !== null) {
      return this.#fail('kafka request frame refused: size out of range, connection closed', { size: refused.size, limit: this.#o.maxFrameBytes });
    }
    if (this.#queue.length >= MAX_QUEUED || this.#queuedBytes >= MAX_QUEUED_BYTES) this.#socket.pause();
    if (!this.#running) void this.#run();
  }

  readonly #enqueue = (frame: Buffer): void => {
    this.#queue.push(frame);
    this.#queuedBytes += frame.length;
  };

  #write(out: ResponseFrame): void {
    if (Buffer.isBuffer(out)) {
      this.#socket.write(out);
      return;
    }
    // One vectored write (writev) for the parts of a frame.
    this.#socket.cork();
    for (const b of out) this.#socket.write(b);
    this.#socket.uncork();
  }

  #refused(err: unknown, frame: Buffer): void {
    const e = err as Error;
    this.#fail('kafka request refused, connection closed', { err: e.message, errName: e.name, apiKey: frame.length >= 2 ? frame.readInt16BE(0) : null, apiVersion: frame.length >= 4 ? frame.readInt16BE(2) : null });
  }

  /** Write outbox responses in order as they become ready. */
  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    void (async () => {
      try {
        while (this.#outbox.length > 0 && !this.#closed) {
          const next = this.#outbox[0]!;
          let out: ResponseFrame | null;
          try {
            out = await next.out;
          } catch (err) {
            this.#outbox.length = 0;
            return this.#refused(err, next.frame);
          }
          this.#outbox.shift();
          if (out !== null && !this.#closed) this.#write(out);
        }
      } finally {
        this.#flushing = false;
        if (this.#closed) this.#outbox.length = 0;
        if (!this.busy) {
          const idle = this.#idle;
          this.#idle = null;
          idle?.();
        }
      }
    })();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0 && !this.#dropped) {
        const frame = this.#queue.shift()!;
        this.#queuedBytes -= frame.length;
        if (this.#queue.length < MAX_QUEUED / 2 && this.#queuedBytes < MAX_QUEUED_BYTES / 2 && this.#socket.isPaused()) this.#socket.resume();
        let out: ResponseFrame | null | PendingResponse;
        try {
          out = await this.#o.handle(frame, this);
        } catch (err) {
          return this.#refused(err, frame);
        }
        if (out instanceof PendingResponse) {
          const p = out.frame;
          // Failures surface in #flush, in order; this only keeps them from being unhandled meanwhile.
          p.catch(() => undefined);
          this.#outbox.push({ frame, out: p });
          this.#flush();
          while (this.#outbox.length >= MAX_PENDING && !this.#closed) await this.#outbox[0]!.out.catch(() => undefined);
        } else if (this.#outbox.length > 0) {
          this.#outbox.push({ frame, out: Promise.resolve(out) });
          this.#flush();
        } else if (out !== null && !this.#closed) this.#write(out);
      }
    } finally {
      this.#running = false;
      if (this.#closed) this.#ended();
      if ((this.#queue.length === 0 && this.#outbox.length === 0) || this.#closed) {
        const idle = this.#idle;
        this.#idle = null;
        idle?.();
      }
    }
  }
}

/**
 * The open connections of a listener or of a gateway thread: each socket's frames to `handle`,
 * and a close that waits for requests in progress.
 */
export class KafkaConnections {
  readonly #o: ConnectionOptions;
  readonly #open = new Set<Connection>();
  #closing = false;

  constructor(o: KafkaConnectionOptions) {
    this.#o = { ...o, refusals: o.refusals ?? refusalLog(o.log) };
  }

  /** Serve `socket` as connection `id` (read through 'data' events: `adoptDescriptor` is the cheaper way). */
  adopt(socket: net.Socket, id: number): void {
    this.#serve(id, socket);
  }

  #serve(id: number, socket: net.Socket, frames?: FrameAssembler): Connection | null {
    if (this.#closing) {
      socket.destroy();
      this.#o.closed?.({ id, remote: '', clientId: null });
      return null;
    }
    // Kept open (a close waits for it) until the requests it still runs after its client hung up are done.
    const c = new Connection(id, socket, this.#o, (ended) => {
      this.#open.delete(ended);
      this.#o.closed?.(ended);
    }, frames);
    this.#open.add(c);
    socket.resume();
    return c;
  }

  /**
   * Serve the socket whose descriptor `fd` is (a duplicate made by the thread that accepted it,
   * KafkaServerOptions.handOff): this thread owns the descriptor from now on and closes it.
   */
  adoptDescriptor(fd: number, id: number): void {
    const frames = new FrameAssembler(this.#o.maxFrameBytes, this.#o.framePool ?? null);
    let c: Connection | null = null;
    // Read in place: each read lands in the frame being received or the assembler's scratch buffer, never in a new ArrayBuffer (frame-assembler.ts).
    // net.Socket's constructor takes `onread` as connect() does (Node ≥ 12); @types/node lists it for connect() only.
    const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
      fd,
      readable: true,
      writable: true,
      onread: {
        buffer: () => frames.readBuffer(),
        callback: (n) => {
          c?.onRead(n);
          return true;
        },
      },
    };
    c = this.#serve(id, new net.Socket(options), frames);
  }

  get size(): number {
    return this.#open.size;
  }

  /** Take no more connections; wait (up to `graceMs`) for requests in progress to be answered, then close every connection. */
  async close(graceMs = 5_000): Promise<void> {
    this.#closing = true;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
    await Promise.race([Promise.all([...this.#open].map((c) => c.whenIdle())), grace]);
    clearTimeout(timer);
    for (const c of this.#open) c.destroy();
    this.#open.clear();
  }
}

/** The descriptor of an accepted socket (libuv's handle exposes it on Unix), or null. */
function descriptorOf(socket: net.Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/** Listen for Kafka clients; resolves once bound. */
export function listenKafka(o: KafkaServerOptions): Promise<KafkaServerHandle> {
  const connections = new KafkaConnections(o);
  let nextId = 1;
  const handOff = o.handOff;
  const here = (fd: number, id: number): void => connections.adoptDescriptor(fd, id);
  // A socket is not read as accepted (pauseOnConnect): its descriptor is served by a socket that
  // reads in place (adoptDescriptor), here or on a gateway thread. net.Server cannot give
  // accepted sockets `onread`, hence the duplicate.
  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    const id = nextId++;
    const taker = handOff?.() ?? here;
    const fd = descriptorOf(socket);
    let copy: number;
    try {
      if (fd === null) throw new Error('no descriptor');
      copy = dupFd(fd);
    } catch (err) {
      o.log.warn({ err: (err as Error).message }, 'kafka connection served through its accepted socket: its descriptor could not be duplicated');
      return connections.adopt(socket, id);
    }
    // The accepted socket's handle closes its descriptor; the copy stays open.
    socket.destroy();
    taker(copy, id);
  });
  return new Promise((resolve, reject) => {
    // node:net never sets SO_REUSEPORT: a port another process listens on fails with EADDRINUSE.
    const failed = (err: Error): void => reject(listenError({ name: 'Kafka listener (--kafka-listen)', host: o.host, port: o.port }, err));
    server.once('error', failed);
    server.listen({ host: o.host, port: o.port }, () => {
      server.off('error', failed);
      server.on('error', (err) => o.log.warn({ err: err.message }, 'kafka listener error'));
      const port = (server.address() as net.AddressInfo).port;
      let stopped = false;
      const stopAccepting = (): void => {
        if (stopped) return;
        stopped = true;
        server.close();
      };
      resolve({
        port,
        stopAccepting,
        connections: () => connections.size,
        async close(graceMs = 5_000): Promise<void> {
          stopAccepting();
          await connections.close(graceMs);
        },
      });
    });
  });
}
