/**
 * The in-memory view: every record, by key, as of `appliedIndex`. Commands are applied strictly
 * in index order. Keys are also kept sorted, so `list(prefix)` is a binary search and a scan.
 */
import { type MetaCommand } from './command';
import { type MetaRecord } from './meta-store';

/**
 * Key order: by Unicode code point, which is the byte order of UTF-8 and so etcd's order.
 * JS `<` compares UTF-16 units, which puts U+10000 and above (surrogate pairs) before U+E000–U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff ? x + 0x10000 : x;
    const sy = y >= 0xd800 && y <= 0xdfff ? y + 0x10000 : y;
    return sx - sy;
  }
  return a.length - b.length;
}

export class MetaView {
  readonly #records = new Map<string, MetaRecord>();
  readonly #keys: string[] = [];
  #appliedIndex: number;

  constructor(appliedIndex = 0, records: readonly MetaRecord[] = []) {
    this.#appliedIndex = appliedIndex;
    for (const r of records) this.#records.set(r.key, r);
    this.#keys.push(...this.#records.keys());
    this.#keys.sort(compareKeys);
  }

  get appliedIndex(): number {
    return this.#appliedIndex;
  }

  get(key: string): MetaRecord | null {
    return this.#records.get(key) ?? null;
  }

  list(prefix: string): MetaRecord[] {
    const out: MetaRecord[] = [];
    for (let i = this.#lowerBound(prefix); i < this.#keys.length; i++) {
      const key = this.#keys[i]!;
      if (!key.startsWith(prefix)) break;
      out.push(this.#records.get(key)!);
    }
    return out;
  }

  /** Apply the next command; returns the record it wrote, or null for a delete. */
  apply(cmd: MetaCommand): MetaRecord | null {
    if (cmd.index !== this.#appliedIndex + 1) {
      throw new Error(`metadata command ${cmd.index} applied after ${this.#appliedIndex}: commands must be applied in order`);
    }
    this.#appliedIndex = cmd.index;
    if (cmd.op === 'put') {
      const record: MetaRecord = { key: cmd.key, value: cmd.value, version: cmd.index };
      if (!this.#records.has(cmd.key)) this.#keys.splice(this.#lowerBound(cmd.key), 0, cmd.key);
      this.#records.set(cmd.key, record);
      return record;
    }
    if (this.#records.delete(cmd.key)) this.#keys.splice(this.#lowerBound(cmd.key), 1);
    return null;
  }

  /**
   * Apply the changes of one etcd revision (`value` undefined: deleted). Revisions may skip
   * numbers (writes outside this store's prefix), but never go backwards. Returns the records
   * written (null for a delete), in the order given.
   */
  applyRevision(revision: number, changes: ReadonlyArray<{ key: string; value?: unknown }>): Array<MetaRecord | null> {
    if (revision < this.#appliedIndex) {
      throw new Error(`metadata revision ${revision} applied after ${this.#appliedIndex}: revisions must be applied in order`);
    }
    this.#appliedIndex = revision;
    return changes.map((c) => {
      if (c.value === undefined) {
        if (this.#records.delete(c.key)) this.#keys.splice(this.#lowerBound(c.key), 1);
        return null;
      }
      const record: MetaRecord = { key: c.key, value: c.value, version: revision };
      if (!this.#records.has(c.key)) this.#keys.splice(this.#lowerBound(c.key), 0, c.key);
      this.#records.set(c.key, record);
      return record;
    });
  }

  /**
   * Replace the view with a snapshot read at `revision` (etcd, after the watch fell behind a
   * compaction): returns the keys whose record changed, in key order, with the new record or null.
   */
  resetTo(revision: number, records: readonly MetaRecord[]): Array<[string, MetaRecord | null]> {
    if (revision < this.#appliedIndex) throw new Error(`metadata snapshot at ${revision} is older than the view (${this.#appliedIndex})`);
    const incoming = new Map(records.map((r) => [r.key, r]));
    const changed: Array<[string, MetaRecord | null]> = [];
    for (const key of this.#keys) if (!incoming.has(key)) changed.push([key, null]);
    for (const r of records) if (this.#records.get(r.key)?.version !== r.version) changed.push([r.key, r]);
    changed.sort((a, b) => compareKeys(a[0], b[0]));
    this.#records.clear();
    for (const r of records) this.#records.set(r.key, r);
    this.#keys.length = 0;
    this.#keys.push(...this.#records.keys());
    this.#keys.sort(compareKeys);
    this.#appliedIndex = revision;
    return changed;
  }

  /** Every record in key order (for a snapshot). */
  records(): MetaRecord[] {
    return this.list('');
  }

  /** The first position whose key is not below `key`. */
  #lowerBound(key: string): number {
    let lo = 0;
    let hi = this.#keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.#keys[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
