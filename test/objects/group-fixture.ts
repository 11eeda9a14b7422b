/** A group object for tests: 10 bytes of filler per part (not frames: nothing reads them as such), then the part table. */
import { groupTrailer } from '../../src/objects';

export function groupOf(parts: Array<{ stream: string; from: number; to: number; early: boolean }>): Buffer {
  let off = 0;
  const laid = parts.map((p) => ({ ...p, off: (off += 10) - 10, len: 10 }));
  return Buffer.concat([Buffer.alloc(off, 7), groupTrailer(laid)]);
}
