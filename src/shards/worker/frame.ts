/**
 * Segment files are a sequence of frames. A frame wraps one log entry of one stream:
 *
 *   0  u32 length   bytes after this 8-byte prefix (type .. end of payload)
 *   4  u32 crc32c   CRC-32C of bytes 8 .. end
 *   8  u8  type     FrameType
 *   9  u32 streamId the shard-local stream id (never reused, so a deleted stream's frames are inert)
 *  13  payload      DATA: one Kafka RecordBatch v2; CREATE/CONFIG: JSON; TRIM: f64 seq; DELETE: empty; SEAL: empty, or JSON naming the idempotent producer that sealed;
 *                   PAD: anything (`svc repair` overwrites a damaged frame with one of the same size, so positions hold);
 *                   CATALOG: JSON, live streams' state carried forward before the reaper deletes the segment holding it, or (`seqFloor`)
 *                   the index's next seqs written by `svc repair` before it moves an index aside (catalog-carry.ts)
 *
 * The RecordBatch carries its own CRC, but it does not cover the base offset and the frame
 * header, and recovery needs to find a torn tail whatever was torn, so the frame has its own.
 * Catalog changes travel in the same log as data, so one group-commit fdatasync makes an
 * append and the seal that follows it durable together.
 */
import { crc32c, crc32cClaimed, crc32cCombine, crc32cRange } from '../../util/crc32c';
import { u32be } from '../../util/be-read';

export const FRAME_HEADER = 13;

export const enum FrameType {
  Data = 1,
  Create = 2,
  Delete = 3,
  Trim = 4,
  Seal = 5,
  Config = 6,
  /** Filler of a damaged frame quarantined by `svc repair`: skipped by replay and reads. */
  Pad = 7,
  /** Catalog carried forward (stream id 0): see catalog-carry.ts. */
  Catalog = 8,
}

export const LAST_TYPE = FrameType.Catalog;

export function encodeFrame(type: FrameType, streamId: number, payload: Uint8Array | null): Buffer {
  const len = payload === null ? 0 : payload.length;
  const buf = Buffer.allocUnsafe(FRAME_HEADER + len);
  buf.writeUInt32BE(len + 5, 0);
  buf[8] = type;
  buf.writeUInt32BE(streamId, 9);
  if (payload !== null) buf.set(payload, FRAME_HEADER);
  buf.writeUInt32BE(crc32c(buf.subarray(8)), 4);
  return buf;
}

/** Bytes of a RecordBatch v2 before the part its CRC covers (baseOffset .. crc; record-batch.ts). */
const BATCH_CRC_START = 21;
const BATCH_CRC_POS = 17;

/**
 * A DATA frame of a batch whose own CRC was checked (or computed) on this thread and whose bytes
 * did not change since but for the base offset, which its CRC does not cover: no pass over its
 * bytes. The frame's CRC covers type, stream id and the whole batch; it is the CRC of the 26
 * bytes the batch's CRC does not cover (frame type and stream id, base offset .. crc field)
 * combined with the batch's CRC, which stands for the rest (`crc32cCombine`). Before, every
 * stored megabyte was checksummed twice on write: once to check the client's CRC, once for the
 * frame.
 *
 * `inPlace`: the FRAME_HEADER bytes before `batch` in its buffer are free (the worker owns a
 * Kafka request frame moved to it, shards/wire.ts): the frame is written around the batch, not
 * copied (a 1 MB Produce batch was copied here, into memory fresh from the allocator).
 */
export function encodeDataFrame(streamId: number, batch: Buffer, inPlace: boolean): Buffer {
  if (batch.length < BATCH_CRC_START) return encodeFrame(FrameType.Data, streamId, batch);
  let buf: Buffer;
  if (inPlace && batch.byteOffset >= FRAME_HEADER) {
    buf = Buffer.from(batch.buffer, batch.byteOffset - FRAME_HEADER, FRAME_HEADER + batch.length);
  } else {
    buf = Buffer.allocUnsafe(FRAME_HEADER + batch.length);
    batch.copy(buf, FRAME_HEADER);
  }
  buf.writeUInt32BE(batch.length + 5, 0);
  buf[8] = FrameType.Data;
  buf.writeUInt32BE(streamId, 9);
  const head = crc32cRange(buf, 8, FRAME_HEADER + BATCH_CRC_START);
  buf.writeUInt32BE(crc32cCombine(head, batch.readUInt32BE(BATCH_CRC_POS), batch.length - BATCH_CRC_START), 4);
  return buf;
}

export function encodeTrimPayload(seq: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeDoubleBE(seq, 0);
  return b;
}

export interface Frame {
  type: FrameType;
  streamId: number;
  /** Position of the frame in the buffer it was parsed from. */
  pos: number;
  /** Whole frame size, header included. */
  size: number;
  payload: Buffer;
}

/**
 * Parse the frame at `pos`. Returns null when the bytes there are not a whole, valid frame
 * (short read, impossible length, CRC mismatch): recovery truncates the log at that point.
 */
export function parseFrame(buf: Buffer, pos: number, verify: boolean): Frame | null {
  if (pos + FRAME_HEADER > buf.length) return null;
  const len = buf.readUInt32BE(pos);
  if (len < 5) return null;
  const end = pos + 8 + len;
  if (end > buf.length) return null;
  if (verify && !frameCrcOk(buf, pos, end)) return null;
  const type = buf[pos + 8] as FrameType;
  if (type < FrameType.Data || type > LAST_TYPE) return null;
  return { type, streamId: buf.readUInt32BE(pos + 9), pos, size: end - pos, payload: buf.subarray(pos + FRAME_HEADER, end) };
}

/** The frame at `pos` (whose length field was already found to fit the buffer) has a valid CRC. */
export function frameCrcOk(buf: Buffer, pos: number, end: number): boolean {
  return crc32cRange(buf, pos + 8, end) === buf.readUInt32BE(pos + 4);
}

/** Why the bytes at `pos` are not a valid frame, or null when they are one. */
export function frameProblem(buf: Buffer, pos: number): string | null {
  if (pos + FRAME_HEADER > buf.length) return 'short frame header';
  const len = buf.readUInt32BE(pos);
  if (len < 5) return `impossible frame length ${len}`;
  if (pos + 8 + len > buf.length) return `frame length ${len} runs past the end of the file`;
  if (!frameCrcOk(buf, pos, pos + 8 + len)) return 'CRC mismatch';
  const type = buf[pos + 8]!;
  if (type < FrameType.Data || type > LAST_TYPE) return `unknown frame type ${type}`;
  return null;
}

/**
 * Bytes of frames checked per pass by `verifiedEnd`: small enough that the walk serving them
 * finds them still in the L1 cache, large enough that a pass is one native call over many small
 * frames; and a read that takes one record of a 1 MiB chunk checks ~32 KiB of it, not all of it.
 */
const CHECK_BLOCK = 32 << 10;

/**
 * Check the frames of a chunk buffer from `start` (a frame boundary) on, about `CHECK_BLOCK`
 * bytes of them at a time: returns the end of the run of whole frames checked, all of which match
 * their CRC; `start` itself when the frame there is cut short or damaged.
 *
 * One CRC-32C of the run (native for 256 bytes and more) is compared with the CRC its frames
 * claim for it: each frame's 8 prefix bytes count as they are and its stored CRC stands for the
 * bytes after them (`crc32cClaimed`), ~30 ns a frame instead of a ~130 ns checksum of each
 * 100-byte record. A frame whose bytes do not match its CRC changes the run's CRC and not the
 * claimed one (the shift is invertible, so one damaged frame is always caught, as by a
 * per-frame check); damage in several frames of a run could cancel out only with probability
 * 2^-32. On a mismatch the frames are checked one by one: the run ends at the first bad one.
 */
export function verifiedEnd(buf: Buffer, start: number): number {
  const stop = Math.min(buf.length, start + CHECK_BLOCK);
  let end = start;
  while (end < stop && end + FRAME_HEADER <= buf.length) {
    const len = u32be(buf, end);
    if (len < 5 || end + 8 + len > buf.length) break;
    end += 8 + len;
  }
  if (end === start || crc32cClaimed(buf, start, end) === crc32cRange(buf, start, end)) return end;
  for (let off = start; off < end; off += 8 + u32be(buf, off)) {
    if (!frameCrcOk(buf, off, off + 8 + u32be(buf, off))) return off;
  }
  return end;
}
