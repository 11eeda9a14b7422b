/**
 * The frames of an import cut into the chunks that cross to the shard worker (docs/storage.md,
 * "Imported streams"): whole frames, at most IMPORT_CHUNK_BYTES each, so a stream of any size
 * crosses as a sequence of bounded messages, one in flight at a time, never as one giant one.
 *
 *   buffers (any cut: segment files, object ranges) ──▶ frame boundaries ──▶ chunks ≤ 1 MiB ──▶ importFrames
 *
 * Only the frames' length prefixes are read here; their CRCs are checked by the shard.
 */
import { SvcError } from '../errors';
import { readBatchHeader } from '../util/record-batch';
import { FRAME_HEADER, FrameType, frameProblem } from './worker/frame';

/** Bytes of frames per chunk sent to the shard; a single larger frame is sent alone. */
export const IMPORT_CHUNK_BYTES = 1 << 20; // 1 MiB
/**
 * A frame length above this is damage, not data (a frame holds one append's batch, far below);
 * refused at once rather than waiting for bytes that never come.
 */
export const MAX_IMPORT_FRAME_BYTES = 256 << 20; // 256 MiB
/** The frame prefix: u32 length (of the bytes after the prefix) + u32 CRC-32C (worker/frame.ts). */
const PREFIX = 8;
/** The shortest frame: prefix, type and stream id. */
const MIN_FRAME = 13;

const EMPTY = Buffer.alloc(0);

/** Cut `source` into chunks of whole frames of at most `max` bytes (one larger frame alone). */
export async function* frameChunks(source: Iterable<Buffer> | AsyncIterable<Buffer>, max = IMPORT_CHUNK_BYTES): AsyncGenerator<Buffer> {
  let carry: Buffer = EMPTY;
  let parts: Buffer[] = [];
  let size = 0;
  let offset = 0;
  for await (const piece of source) {
    const b = carry.length === 0 ? piece : Buffer.concat([carry, piece]);
    let pos = 0;
    while (b.length - pos >= PREFIX) {
      const len = PREFIX + b.readUInt32BE(pos);
      if (len < MIN_FRAME || len > MAX_IMPORT_FRAME_BYTES) {
        throw new SvcError('data_corrupt', `import: impossible frame length ${len - PREFIX} at byte ${offset + pos} of the input`);
      }
      if (b.length - pos < len) break;
      if (size > 0 && size + len > max) {
        yield Buffer.concat(parts, size);
        parts = [];
        size = 0;
      }
      parts.push(b.subarray(pos, pos + len));
      size += len;
      pos += len;
    }
    offset += pos;
    carry = b.subarray(pos);
  }
  if (carry.length > 0) throw new SvcError('data_corrupt', `import: the input ends inside a frame (${carry.length} bytes after byte ${offset})`);
  if (size > 0) yield Buffer.concat(parts, size);
}

/**
 * The frames of `buf` (whole frames, e.g. an object range) with every CRC checked and the DATA
 * frames wholly below `startSeq` left out (trimmed records are not imported). A damaged frame is a
 * `data_corrupt` error naming `where`. Returns `buf` itself when nothing is left out.
 */
export function liveFrames(buf: Buffer, startSeq: number, where: string): Buffer {
  const kept: Buffer[] = [];
  let runStart = 0;
  let dropped = false;
  let pos = 0;
  while (pos < buf.length) {
    const problem = frameProblem(buf, pos);
    if (problem !== null) throw new SvcError('data_corrupt', `${where}: the frame at byte ${pos} is damaged (${problem})`);
    const end = pos + 8 + buf.readUInt32BE(pos);
    if (buf[pos + 8] === FrameType.Data && startSeq > 0) {
      let last: number;
      try {
        const h = readBatchHeader(buf, pos + FRAME_HEADER);
        last = h.baseOffset + h.lastOffsetDelta;
      } catch (err) {
        throw new SvcError('data_corrupt', `${where}: the frame at byte ${pos} holds no RecordBatch (${(err as Error).message})`);
      }
      if (last < startSeq) {
        if (pos > runStart) kept.push(buf.subarray(runStart, pos));
        runStart = end;
        dropped = true;
      }
    }
    pos = end;
  }
  if (!dropped) return buf;
  if (pos > runStart) kept.push(buf.subarray(runStart, pos));
  return Buffer.concat(kept);
}
