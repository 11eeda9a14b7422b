/**
 * The `raw` read format: the record values concatenated, nothing between them. Null
 * values (tombstones) contribute no bytes; keys, headers and timestamps are dropped.
 */
import type { DecodedRecord } from '../../util/record-batch';

/** Concatenate the values of `records` into one exact-size buffer. */
export function renderRaw(records: readonly DecodedRecord[]): Buffer {
  let total = 0;
  for (let i = 0; i < records.length; i++) total += (records[i] as DecodedRecord).value?.length ?? 0;
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < records.length; i++) {
    const value = (records[i] as DecodedRecord).value;
    if (value === null) continue;
    out.set(value, pos);
    pos += value.length;
  }
  return out;
}
