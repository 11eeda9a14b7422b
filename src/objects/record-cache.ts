/**
 * The part records (part-records.ts) an opener has read, kept by key: the many opens of one
 * failover (every stream of a node that died) each read the dead writer's pending records, and
 * reading them whole each time cost every open some megabytes under heavy load — a cost that
 * grew with the writer's backlog times the streams moved. A record is written once and never
 * changed (its name, a group object number of its writer's, is never used again; a txn sent again
 * writes the same value), so an opener reads the keys only and fetches the values of those it
 * has not seen (Ledger.pendingOf).
 */
import { type RecordedPart, decodePartRecord, partsByStream } from './part-records';

/** Parts held at most (about 150 bytes each): beyond, the records read first are forgotten first. */
const MAX_PARTS = 200_000;

export class PartRecordCache {
  /** Record key → its parts by stream, in the order the records were read (Map order: oldest first). */
  readonly #records = new Map<string, { parts: number; byStream: Map<string, RecordedPart[]> }>();
  #parts = 0;

  /** The record's parts of `stream` ([] when it names none), or undefined when the record is not held. */
  partsOf(key: string, stream: string): RecordedPart[] | undefined {
    const r = this.#records.get(key);
    return r === undefined ? undefined : (r.byStream.get(stream) ?? []);
  }

  /** Hold a record read from etcd (its value); throws on a value that is not a part record. */
  add(key: string, value: Buffer): void {
    if (this.#records.has(key)) return;
    const parts = decodePartRecord(value);
    this.#records.set(key, { parts: parts.length, byStream: partsByStream(parts) });
    this.#parts += parts.length;
    for (const [k, r] of this.#records) {
      if (this.#parts <= MAX_PARTS || k === key) break;
      this.#records.delete(k);
      this.#parts -= r.parts;
    }
  }

  /** Forget the records under `prefix` (a writer's) that are not in `listed` (indexed or stranded since: deleted). */
  retain(prefix: string, listed: ReadonlySet<string>): void {
    for (const [k, r] of this.#records) {
      if (!k.startsWith(prefix) || listed.has(k)) continue;
      this.#records.delete(k);
      this.#parts -= r.parts;
    }
  }
}
