/**
 * Object metadata (ETag, Last-Modified, size, headers) for HEAD and for sizing range reads,
 * bounded by entry count, least recently used evicted first. Freshness is the bucket TTL,
 * checked by the caller against `checkedAt`.
 */
import { type ObjectMeta } from './entry';

export interface MetaEntry {
  meta: ObjectMeta;
  checkedAt: number;
}

export class MetadataCache {
  readonly #entries = new Map<string, MetaEntry>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(id: string): MetaEntry | undefined {
    const e = this.#entries.get(id);
    if (e !== undefined) {
      this.#entries.delete(id);
      this.#entries.set(id, e);
    }
    return e;
  }

  set(id: string, e: MetaEntry): void {
    if (this.#max === 0) return;
    this.#entries.delete(id);
    this.#entries.set(id, e);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(id: string): void {
    this.#entries.delete(id);
  }
}
