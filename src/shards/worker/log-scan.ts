/**
 * Walking a segment's frames and telling damage from a torn tail. Shared by recovery (which
 * cuts a torn tail and refuses anything else) and the offline `svc check` / `svc repair`.
 *
 * A frame that is not whole and valid is a *torn tail* only when no valid frame follows it
 * anywhere in the file: a crash interrupted the last write, which was never acknowledged.
 * When a valid frame follows, the bad bytes are damage in the middle of acknowledged data:
 * cutting there would drop everything after it (docs/storage.md, "Corruption").
 *
 * Finding the next valid frame after a bad one: the bad frame's own length is tried first (a
 * flipped bit in a payload leaves the length intact), then every byte offset after it (the
 * length itself may be what is damaged). A random position passes as a frame only when its
 * length fits, its type is known and its CRC-32C matches.
 */
import { type Frame, FrameType, LAST_TYPE, frameProblem, parseFrame } from './frame';

/** A byte range of a segment that holds no valid frame. */
export interface Damage {
  /** First bad byte. */
  pos: number;
  /** First byte after the damage: the next valid frame, or the end of the file. */
  end: number;
  /** What is wrong with the frame at `pos`. */
  reason: string;
  /** No valid frame follows: the file ends in a torn write. */
  torn: boolean;
}

export interface SegmentScan {
  /** Valid frames, in order (positions relative to the buffer). */
  frames: number;
  damage: Damage[];
}

/**
 * Walk every frame of `buf` (a segment's bytes from `from`, positions relative to `buf`),
 * calling `onFrame` for each valid one, and report the damaged ranges between them.
 * With `stopAtDamage` the walk ends at the first damage (recovery: nothing after it is applied).
 */
export function scanFrames(buf: Buffer, onFrame: ((f: Frame) => void) | null, stopAtDamage: boolean): SegmentScan {
  const damage: Damage[] = [];
  let frames = 0;
  let off = 0;
  while (off < buf.length) {
    const f = parseFrame(buf, off, true);
    if (f !== null) {
      frames++;
      onFrame?.(f);
      off += f.size;
      continue;
    }
    const reason = frameProblem(buf, off) ?? 'damaged frame';
    const next = nextValidFrame(buf, off);
    damage.push({ pos: off, end: next ?? buf.length, reason, torn: next === null });
    if (next === null || stopAtDamage) break;
    off = next;
  }
  return { frames, damage };
}

/** The position of the first valid frame after the bad one at `bad`, or null. */
export function nextValidFrame(buf: Buffer, bad: number): number | null {
  if (bad + 8 <= buf.length) {
    const claimed = bad + 8 + buf.readUInt32BE(bad);
    if (claimed > bad + 8 && claimed < buf.length && parseFrame(buf, claimed, true) !== null) return claimed;
  }
  for (let p = bad + 1; p + 13 <= buf.length; p++) {
    const len = buf.readUInt32BE(p);
    // Cheap tests first: most offsets fail on the length or the type before any CRC is computed.
    if (len < 5 || p + 8 + len > buf.length) continue;
    const type = buf[p + 8]!;
    if (type < FrameType.Data || type > LAST_TYPE) continue;
    if (parseFrame(buf, p, true) !== null) return p;
  }
  return null;
}
