/**
 * A stream read the way a new owner reads it: the ledger's entries, each a byte range of an
 * object in the store, checked frame by frame (length, CRC-32C, the record batch's CRC, and every
 * record's seq within its entry's [from, to)).
 */
import { type Ledger, type ObjectStore } from '../../src/objects';
import { parseFrame } from '../../src/shards/worker/frame';
import { decodeRecords, verifyBatchCrc } from '../../src/util/record-batch';

/** Every record of `name` as the ledger and the store hold it: [seq, value], and the frame types in order. */
export async function fromObjects(ledger: Ledger, store: ObjectStore, name: string): Promise<{ records: Array<[number, string]>; frames: number[] }> {
  const records: Array<[number, string]> = [];
  const frames: number[] = [];
  for (const e of await ledger.entries(name)) {
    const buf = await store.get(e.o, { offset: e.off, length: e.len });
    let seen = 0;
    for (let pos = 0; pos < buf.length; ) {
      const f = parseFrame(buf, pos, true);
      if (f === null) throw new Error(`entry ${e.key}: no valid frame at byte ${pos} of ${e.o}`);
      frames.push(f.type);
      if (f.type === 1) {
        expect(verifyBatchCrc(f.payload)).toBe(true);
        for (const r of decodeRecords(f.payload)) {
          records.push([r.offset, r.value!.toString()]);
          expect(r.offset >= e.from && r.offset < e.to).toBe(true);
          seen++;
        }
      }
      pos += f.size;
    }
    expect(seen).toBe(e.to - e.from);
  }
  return { records, frames };
}
