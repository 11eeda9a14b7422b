/**
 * Big-endian integer reads for the hot loops of a read (frame walks, batch headers): plain index
 * arithmetic. Node's `Buffer#readUInt32BE` and friends validate their offset on every call
 * through a wrapper that V8 does not inline, which in a walk over a stream of single-record
 * appends (a frame per record) cost more than the reads themselves. No bounds are checked here:
 * callers read only inside frames whose length they have checked.
 */

export function u32be(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

export function i32be(b: Uint8Array, o: number): number {
  return (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
}

export function i16be(b: Uint8Array, o: number): number {
  return (((b[o]! << 8) | b[o + 1]!) << 16) >> 16;
}

/** An unsigned 48-bit integer (the low 48 bits of a batch's base offset). */
export function u48be(b: Uint8Array, o: number): number {
  return ((b[o]! << 8) | b[o + 1]!) * 2 ** 32 + u32be(b, o + 2);
}
