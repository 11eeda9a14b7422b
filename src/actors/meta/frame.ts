/**
 * The metadata files (the command log and the snapshot) are sequences of frames:
 *
 *   0  u32 length   bytes of the body
 *   4  u32 crc32c   CRC-32C of the body
 *   8  body         UTF-8 JSON
 *
 * Big-endian, like the shard frames. Recovery reads frames from the start of a file up to the
 * first one that is cut short or fails its CRC: everything after it is a torn tail.
 */
import { crc32cRange } from '../../util/crc32c';

export const FRAME_HEADER = 8;

export function encodeFrame(json: string): Buffer {
  const bodyLength = Buffer.byteLength(json);
  const buf = Buffer.allocUnsafe(FRAME_HEADER + bodyLength);
  buf.write(json, FRAME_HEADER, 'utf8');
  buf.writeUInt32BE(bodyLength, 0);
  buf.writeUInt32BE(crc32cRange(buf, FRAME_HEADER, buf.length), 4);
  return buf;
}

export interface ScannedFrames {
  /** The bodies of the valid frames, in file order. */
  bodies: Buffer[];
  /** Where the valid frames end: the file's length when nothing is torn. */
  end: number;
}

/** The valid frames at the start of `buf`. */
export function scanFrames(buf: Buffer): ScannedFrames {
  const bodies: Buffer[] = [];
  let pos = 0;
  while (pos + FRAME_HEADER <= buf.length) {
    const length = buf.readUInt32BE(pos);
    // A body is never empty (it is a JSON object), and eight zero bytes would pass the CRC check
    // (CRC-32C of nothing is 0): a file system may leave zeros past the end of a crashed write.
    if (length === 0 || pos + FRAME_HEADER + length > buf.length) break;
    const start = pos + FRAME_HEADER;
    if (crc32cRange(buf, start, start + length) !== buf.readUInt32BE(pos + 4)) break;
    bodies.push(buf.subarray(start, start + length));
    pos = start + length;
  }
  return { bodies, end: pos };
}
