/**
 * Kafka UUIDs (topic ids, KIP-516) are 16 raw bytes on the wire. The codecs hand them out as
 * lowercase canonical strings (`8-4-4-4-12` hex digits) so call sites can compare them and use
 * them as map keys; the all-zero UUID means "no id" in the protocol.
 */

/** The all-zero UUID, Kafka's `Uuid.ZERO_UUID`: "no topic id". */
export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a canonical `8-4-4-4-12` hex UUID string (either case). */
export function isUuid(s: string): boolean {
  return CANONICAL.test(s);
}

/** Two lowercase hex digits per byte value; a table beats Buffer#toString('hex') plus slicing. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Canonical lowercase string of the 16 bytes at `buf[pos..pos+16)`. */
export function uuidFromBytes(buf: Buffer, pos: number): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[buf[pos + i] as number];
  }
  return s;
}

/** Value of the hex digit with char code `c`, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1; // a-f, A-F
}

/** Write the UUID string `s` (canonical form, either case) as 16 bytes at `buf[pos]`. */
export function uuidToBytes(s: string, buf: Buffer, pos: number): void {
  if (s.length !== 36) throw new RangeError(`not a UUID: ${JSON.stringify(s)}`);
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) {
      if (s.charCodeAt(at) !== 45) throw new RangeError(`not a UUID: ${JSON.stringify(s)}`); // '-'
      at++;
    }
    const hi = hexValue(s.charCodeAt(at));
    const lo = hexValue(s.charCodeAt(at + 1));
    if (hi < 0 || lo < 0) throw new RangeError(`not a UUID: ${JSON.stringify(s)}`);
    buf[pos + i] = (hi << 4) | lo;
    at += 2;
  }
}
