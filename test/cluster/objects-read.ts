/**
 * A stream read the way a new owner reads it: the ledger's entries (and parts not indexed yet), each a byte range of an
 * object in the store, checked frame by frame (length, CRC-32C, the record batch's CRC, and every
 * record's seq within its entry's [from, to)).
 */
import { type EntryValue, type Ledger, type ObjectStore } from '../../src/objects';

/** The node under test writes the `records` format (a new cluster's; SVC_OBJECTS_LEDGER=entries, `--objects-ledger entries`, chooses the other). */
export const RECORDS_FORMAT = process.env.SVC_OBJECTS_LEDGER !== 'entries';

/** A byte range the ledger records for a stream: an entry, or (the records format) a part not indexed yet. */
export type RecordedRange = EntryValue & { epoch: number; counter: number };

/**
 * What the ledger records of `name`, as its next opener would take it: its entries and, in the
 * records format, its parts not indexed yet (pending in any writer's part records, or stranded)
 * that the entries do not hold, in seq order; nothing once the stream is deleted (no fence).
 */
export async function recorded(ledger: Ledger, name: string): Promise<RecordedRange[]> {
  if ((await ledger.fence(name)) === null) return [];
  const { entries, pending } = await ledger.pendingOf(name, '');
  return [...entries, ...pending].sort((a, b) => a.from - b.from);
}
import { parseFrame } from '../../src/shards/worker/frame';
import { decodeRecords, verifyBatchCrc } from '../../src/util/record-batch';

/** Every record of `name` as the ledger and the store hold it: [seq, value], and the frame types in order. */
export async function fromObjects(ledger: Ledger, store: ObjectStore, name: string): Promise<{ records: Array<[number, string]>; frames: number[] }> {
  const records: Array<[number, string]> = [];
  const frames: number[] = [];
  for (const e of await recorded(ledger, name)) {
    const buf = await store.get(e.o, { offset: e.off, length: e.len });
    let seen = 0;
    for (let pos = 0; pos < buf.length; ) {
      const f = parseFrame(buf, pos, true);
      if (f === null) throw new Error(`${name} ${e.epoch}.${e.counter}: no valid frame at byte ${pos} of ${e.o}`);
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
