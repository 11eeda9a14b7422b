/**
 * The `json-array` read format (Durable Streams JSON mode): the record values of a JSON stream
 * joined into one JSON array, `[v1,v2,…]`; `[]` for none. Each value was checked to be JSON when
 * it was appended. Null values (tombstones, e.g. from Kafka) are skipped.
 *
 * Local reads do not call this: the shard joins the values as it walks the stored batches, without
 * decoding records (shard-reader.ts, `gatherValues`). Reads of an adopted stream's records in the
 * object store do (`gatherBatches`), and it stays the reference the local path is tested against
 * (test/shards/worker/values-read.test.ts).
 */
import type { DecodedRecord } from '../../util/record-batch';

const OPEN = 0x5b; // [
const COMMA = 0x2c; // ,
const CLOSE = 0x5d; // ]

export function renderJsonArray(records: readonly DecodedRecord[]): Buffer {
  let total = 2;
  let n = 0;
  for (const r of records) {
    if (r.value === null) continue;
    total += r.value.length;
    n++;
  }
  if (n > 1) total += n - 1;
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  out[pos++] = OPEN;
  for (const r of records) {
    if (r.value === null) continue;
    if (pos > 1) out[pos++] = COMMA;
    out.set(r.value, pos);
    pos += r.value.length;
  }
  out[pos] = CLOSE;
  return out;
}
