/**
 * Durable Streams offsets (PROTOCOL.md "Offsets") and how they map to seqs.
 *
 * An offset is opaque to clients but must sort lexicographically in stream order. This node
 * writes `%016d_%016d`: the first part is always 0 (reserved), the second is the seq of the next
 * record — so `0000000000000000_0000000000000042` is "after the first 42 records" on every
 * listener: Svc `seq=42` and DS `offset=0000000000000000_0000000000000042` name one position.
 * Sentinels: `-1` (the start; same as no offset) and `now` (the tail).
 */
import { SvcError } from '../../errors';

const DIGITS = 16;
const ZERO_PART = '0'.repeat(DIGITS);
const OFFSET_RE = /^(\d{16})_(\d{16})$/;

export function formatOffset(seq: number): string {
  return `${ZERO_PART}_${String(seq).padStart(DIGITS, '0')}`;
}

/** Offset → seq; -1 for `now` (the tail). A first part other than 0 is past any tail this node has. */
export function parseOffset(raw: string | undefined): number {
  if (raw === undefined || raw === '-1') return 0;
  if (raw === 'now') return -1;
  const m = OFFSET_RE.exec(raw);
  if (m === null) throw new SvcError('invalid_parameter', `offset ${JSON.stringify(raw)} is not an offset this server issued (expected -1, now or NNNNNNNNNNNNNNNN_NNNNNNNNNNNNNNNN)`);
  if (m[1] !== ZERO_PART) return Number.MAX_SAFE_INTEGER;
  return Number(m[2]);
}
