/**
 * DS offsets as the subscription manager sees them: opaque strings that sort lexicographically
 * (PROTOCOL.md, "Offsets"), minted by the listener as `%016d_%016d`.
 */

/** The offset of an empty stream, and the tail of a stream that does not exist. */
export const ZERO_OFFSET = '0000000000000000_0000000000000000';

/** The acked offset of a stream nothing was read from yet (the protocol's "start" sentinel). */
export const BEFORE_FIRST = '-1';

const OFFSET_RE = /^\d{16}_\d{16}$/;

export function isOffset(value: unknown): value is string {
  return typeof value === 'string' && OFFSET_RE.test(value);
}

/** The later of two offsets (`-1` sorts before every minted offset). */
export function maxOffset(a: string, b: string): string {
  return a >= b ? a : b;
}

/** Whether a stream with tail `tail` has messages past `acked`. An empty stream has none. */
export function hasPending(acked: string, tail: string): boolean {
  return tail !== ZERO_OFFSET && tail > acked;
}
