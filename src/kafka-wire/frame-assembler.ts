/**
 * TCP chunks in, request frames out (kafka.apache.org/protocol: `int32 size | request`).
 *
 *   chunk ─┬─ small frame (< LARGE_FRAME_BYTES): gathered, one concat when a frame spans chunks;
 *          │  the frame may share its ArrayBuffer with the next ones
 *          └─ large frame: as soon as its size is read, one buffer of exactly that size with an
 *             ArrayBuffer of its own; every later chunk is copied straight into it
 *
 * Why the large path: a Produce request is typically ~1 MB (librdkafka's batch.size), arriving
 * in ~64 KiB reads. Gathering the reads and concatenating them at the end copies each byte once
 * too, but into a buffer the shard hop then had to copy again, since it could not tell what else
 * lived in it. A large frame's buffer holds that frame alone, so Produce can hand it to the shard
 * worker whole (`takeFrameBuffer`, then moved by src/shards/wire.ts) and the batch crosses
 * without a copy; the worker hands the buffer back once the frame is stored (FramePool). The
 * buffer is taken when the size is known, not when the bytes have arrived (a Kafka broker
 * allocates its receive buffer at the size too): a new one's pages are committed as they are
 * written, so a client that announces a large frame and sends nothing costs address space, not
 * memory.
 *
 * Reading in place (`readBuffer` / `received`, for a socket read with net's `onread`): the socket
 * reads straight into the unfilled rest of the large frame being received, so its bytes are not
 * copied at all, and otherwise into one scratch buffer per connection, whose bytes are copied out
 * (`push`). Why: a socket read without `onread` allocates a new ArrayBuffer for every read, which
 * V8 counts as external memory; at ~1 MB per Produce request that made the listener's isolate mark
 * its whole heap every ~30 MB produced (measured: ~2 ms of CPU per MB on V8's helper threads).
 */

/** Bytes of a connection's scratch read buffer (`readBuffer`): the most one read takes when no large frame is being received. */
const SCRATCH_BYTES = 64 * 1024;

/** Frames at least this large get a buffer of their own. */
export const LARGE_FRAME_BYTES = 64 * 1024; // 64 KiB: the shard hop moves data this large instead of copying it
/** Returned frame buffers kept for reuse, at most. */
const POOL_MAX_BYTES = 32 * 1024 * 1024; // 32 MiB: ~2 connections' worth of 16 pending 1 MB Produce requests

/**
 * Buffers of large frames that the shards handed back once done with them
 * (ShardClient.onReturnedBuffer), reused for the next large frames. Why: a new 1 MB ArrayBuffer
 * per request counts as external memory on both threads until a full collection, and made each
 * isolate mark its whole heap every ~30 MB produced (measured: none with reuse); a reused buffer
 * is also already paged in.
 */
export class FramePool {
  readonly #free: ArrayBuffer[] = [];
  #bytes = 0;

  /**
   * Keep `ab` for a later frame (not a small one). A full pool drops its oldest buffers: the
   * sizes the clients send now replace those of an earlier load (a pool full of buffers that fit
   * no frame would allocate for every one).
   */
  put(ab: ArrayBuffer): void {
    if (ab.byteLength < LARGE_FRAME_BYTES || ab.byteLength > POOL_MAX_BYTES) return;
    this.#free.push(ab);
    this.#bytes += ab.byteLength;
    while (this.#bytes > POOL_MAX_BYTES) this.#bytes -= this.#free.shift()!.byteLength;
  }

  /** A buffer for a frame of `size` bytes: a returned one that fits and is at most twice as large, else a new one (rounded up to 64 KiB, so that it fits the next frames of about that size too). */
  take(size: number): ArrayBuffer {
    for (let i = this.#free.length - 1; i >= 0; i--) {
      const ab = this.#free[i]!;
      if (ab.byteLength < size || ab.byteLength > 2 * size) continue;
      this.#free.splice(i, 1);
      this.#bytes -= ab.byteLength;
      return ab;
    }
    return newBuffer(Math.ceil(size / LARGE_FRAME_BYTES) * LARGE_FRAME_BYTES);
  }

  /** Bytes held for reuse. */
  get bytes(): number {
    return this.#bytes;
  }
}

/** Not from the Buffer pool (allocUnsafe may slice one): a frame's ArrayBuffer must hold nothing else. Not zeroed: every byte of a frame is written before it is read. */
function newBuffer(size: number): ArrayBuffer {
  return Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer;
}

/** ArrayBuffers of large frames that nobody took over yet (see `takeFrameBuffer`). */
const ownBuffers = new WeakSet<ArrayBuffer>();

/**
 * Whether `view` lies in a large request frame's own ArrayBuffer, which holds that frame alone;
 * true once per buffer: the caller takes the buffer over (moves it to another thread), and the
 * frame's other bytes are not to be read after that.
 */
export function takeFrameBuffer(view: Buffer): boolean {
  const ab = view.buffer;
  return ab instanceof ArrayBuffer && ownBuffers.delete(ab);
}

/** What `push` refuses: a frame whose size prefix is negative or above the limit. */
export interface FrameSizeRefusal {
  size: number;
}

export class FrameAssembler {
  readonly #maxFrameBytes: number;
  readonly #largeFrameBytes: number;
  readonly #pool: FramePool | null;
  /** Bytes received and not yet part of a frame (small frames and size prefixes). */
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** The large frame being filled, and how much of it has arrived. */
  #large: Buffer | null = null;
  #filled = 0;
  /** The scratch buffer of reads in place (made at the first `readBuffer`), and whether the last `readBuffer` gave it (else the large frame's rest). */
  #scratch: Buffer | null = null;
  #readingScratch = true;

  /** `maxFrameBytes`: the largest frame accepted (bytes after the size prefix); `pool`: where large frames' buffers come from (null: new ones). */
  constructor(maxFrameBytes: number, pool: FramePool | null = null, largeFrameBytes = LARGE_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes;
    this.#pool = pool;
    this.#largeFrameBytes = largeFrameBytes;
  }

  /** Bytes received that belong to no whole frame yet. */
  get pendingBytes(): number {
    return this.#buffered + this.#filled;
  }

  /**
   * Take one chunk; every frame it completes goes to `onFrame` (without its size prefix), in
   * order. Returns the refused size when a size prefix is out of range (the connection is to be
   * closed; nothing after it is read), else null.
   */
  push(chunk: Buffer, onFrame: (frame: Buffer) => void): FrameSizeRefusal | null {
    return this.#push(chunk, onFrame, false);
  }

  /** `push`; `scratch`: `chunk` lies in the scratch buffer, which the next read overwrites, so what is kept of it or given as a frame is copied out. */
  #push(chunk: Buffer, onFrame: (frame: Buffer) => void, scratch: boolean): FrameSizeRefusal | null {
    const own = (b: Buffer): Buffer => (scratch && b.buffer === this.#scratch!.buffer ? Buffer.from(b) : b);
    let d = chunk;
    if (this.#large !== null) {
      const large = this.#large;
      const n = Math.min(large.length - this.#filled, d.length);
      d.copy(large, this.#filled, 0, n);
      this.#filled += n;
      if (this.#filled < large.length) return null;
      this.#large = null;
      this.#filled = 0;
      onFrame(large);
      d = d.subarray(n);
      if (d.length === 0) return null;
    }
    this.#chunks.push(d);
    this.#buffered += d.length;
    while (this.#buffered >= 4) {
      const head = this.#chunks[0]!.length >= 4 ? this.#chunks[0]! : this.#flatten();
      const size = head.readInt32BE(0);
      if (size < 0 || size > this.#maxFrameBytes) return { size };
      if (this.#buffered < 4 + size) {
        if (size >= this.#largeFrameBytes) this.#startLarge(size);
        break;
      }
      const all = this.#flatten();
      onFrame(own(all.subarray(4, 4 + size)));
      const rest = all.subarray(4 + size);
      this.#chunks = rest.length > 0 ? [rest] : [];
      this.#buffered = rest.length;
    }
    if (scratch) this.#chunks = this.#chunks.map(own);
    return null;
  }

  /**
   * Where the socket's next read lands: the unfilled rest of the large frame being received, else
   * this assembler's scratch buffer. Each call must be followed by one `received` for that read
   * before the next call (net's `onread` asks for the next buffer after each read's callback).
   */
  readBuffer(): Buffer {
    if (this.#large !== null) {
      this.#readingScratch = false;
      return this.#large.subarray(this.#filled);
    }
    this.#readingScratch = true;
    return (this.#scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES));
  }

  /** `n` bytes were read into the buffer the last `readBuffer` gave; as `push`. */
  received(n: number, onFrame: (frame: Buffer) => void): FrameSizeRefusal | null {
    if (this.#readingScratch) return this.#push(this.#scratch!.subarray(0, n), onFrame, true);
    const large = this.#large!;
    this.#filled += n;
    if (this.#filled < large.length) return null;
    this.#large = null;
    this.#filled = 0;
    onFrame(large);
    return null;
  }

  /** A large frame begins: its own buffer, holding what has arrived of it (all of `#chunks` after the size). */
  #startLarge(size: number): void {
    const ab = this.#pool !== null ? this.#pool.take(size) : newBuffer(size);
    const large = Buffer.from(ab, 0, size);
    ownBuffers.add(ab);
    let skip = 4;
    let at = 0;
    for (const c of this.#chunks) {
      if (skip >= c.length) {
        skip -= c.length;
        continue;
      }
      at += c.copy(large, at, skip);
      skip = 0;
    }
    this.#large = large;
    this.#filled = at;
    this.#chunks = [];
    this.#buffered = 0;
  }

  #flatten(): Buffer {
    const b = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#buffered);
    this.#chunks = [b];
    return b;
  }
}
