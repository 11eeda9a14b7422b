import { isUtf8 as nodeIsUtf8 } from 'node:buffer';

/** True when `b` is well-formed UTF-8 (the empty array is). Native (simdutf) in Node ≥ 18.14. */
export function isUtf8(b: Uint8Array): boolean {
  return b.length === 0 || nodeIsUtf8(b);
}
