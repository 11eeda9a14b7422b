/**
 * The memory tier: small objects (≤ memory_object_max) as Buffers, least recently used
 * evicted first once the byte budget is spent. A Map keeps insertion order, so moving an
 * entry to the end on every hit makes the first entry the least recently used.
 */
import { type ObjectMeta } from './entry';

export interface MemoryEntry {
  meta: ObjectMeta;
  body: Buffer;
  /** When the origin last confirmed this version (ms). */
  checkedAt: number;
}

export class MemoryTier {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #capacity: number;
  readonly #objectMax: number;
  readonly #onEvict: () => void;
  #bytes = 0;
  /** The id last read or stored, i.e. the Map's last entry: a hit on it moves nothing (a hot object's hits skip a delete and an insert). */
  #newest: string | undefined;

  constructor(capacity: number, objectMax: number, onEvict: () => void = () => {}) {
    this.#capacity = capacity;
    this.#objectMax = Math.min(objectMax, capacity);
    this.#onEvict = onEvict;
  }

  get(id: string): MemoryEntry | undefined {
    const e = this.#entries.get(id);
    if (e !== undefined && id !== this.#newest) {
      this.#entries.delete(id);
      this.#entries.set(id, e);
      this.#newest = id;
    }
    return e;
  }

  fits(size: number): boolean {
    return size <= this.#objectMax;
  }

  set(id: string, e: MemoryEntry): void {
    this.delete(id);
    if (!this.fits(e.body.length)) return;
    this.#entries.set(id, e);
    this.#newest = id;
    this.#bytes += e.body.length;
    for (const [oldId, old] of this.#entries) {
      if (this.#bytes <= this.#capacity) break;
      this.#entries.delete(oldId);
      if (oldId === this.#newest) this.#newest = undefined;
      this.#bytes -= old.body.length;
      this.#onEvict();
    }
  }

  delete(id: string): void {
    const e = this.#entries.get(id);
    if (e === undefined) return;
    if (id === this.#newest) this.#newest = undefined;
    this.#entries.delete(id);
    this.#bytes -= e.body.length;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
