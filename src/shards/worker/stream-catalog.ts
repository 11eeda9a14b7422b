/**
 * A shard's streams: by id (the log's key) and by name (the clients'), the next id to hand out,
 * the sorted name list that paginated listing walks, and the config changes accepted but not yet
 * durable (appends are checked against those; `s.meta` stays the durable meta).
 */
import { compareNames } from '../names';
import { type ListParams, type ListResult, type StreamInfo } from '../types';
import { type StreamMeta } from './stream-meta';
import { type StreamState, isExpired, newStreamState } from './stream-state';

export class StreamCatalog {
  readonly byId: Map<number, StreamState>;
  /** The newest stream of each name (a deleted one may still be in `byId` until its DELETE applies). */
  readonly byName: Map<string, StreamState>;
  #nextStreamId: number;
  #sortedNames: string[] | null = null;
  readonly #acceptedMeta = new Map<StreamState, StreamMeta>();

  constructor(byId: Map<number, StreamState>, byName: Map<string, StreamState>, nextStreamId: number) {
    this.byId = byId;
    this.byName = byName;
    this.#nextStreamId = nextStreamId;
  }

  get nextStreamId(): number {
    return this.#nextStreamId;
  }

  /** A new stream under a fresh id (accepted: its CREATE frame is not durable yet); an import's staging stream gets no name. */
  add(meta: StreamMeta): StreamState {
    const s = newStreamState(this.#nextStreamId++, meta);
    this.byId.set(s.id, s);
    if (!meta.importing) this.name(s);
    return s;
  }

  /** The name leads to `s` (a new stream, or an import published). */
  name(s: StreamState): void {
    this.byName.set(s.meta.name, s);
    this.#sortedNames = null;
  }

  /** The name no longer leads to `s` (its delete is accepted). */
  unname(s: StreamState): void {
    if (this.byName.get(s.meta.name) === s) this.byName.delete(s.meta.name);
    this.#sortedNames = null;
  }

  /** The stream's meta as of accepted changes (what new appends are checked against). */
  metaOf(s: StreamState): StreamMeta {
    return this.#acceptedMeta.get(s) ?? s.meta;
  }

  /** A config change accepted: checks see `next` until it is durable. */
  accept(s: StreamState, next: StreamMeta): void {
    this.#acceptedMeta.set(s, next);
  }

  /** The change to `next` is durable (s.meta has it): unless a later one is pending, checks read s.meta again. */
  settle(s: StreamState, next: StreamMeta): void {
    if (this.#acceptedMeta.get(s) === next) this.#acceptedMeta.delete(s);
  }

  /** A live stream bound to `schema` (a schema is not deleted while one is), or null. */
  boundTo(schema: string, now: number): string | null {
    for (const s of this.byName.values()) {
      if (s.deleted || isExpired(s, now)) continue;
      if (s.meta.schema === schema || this.metaOf(s).schema === schema) return s.meta.name;
    }
    return null;
  }

  /** Every live stream bound to a schema (its accepted binding, when a change is pending). */
  bindings(now: number): Array<{ stream: string; schema: string }> {
    const out: Array<{ stream: string; schema: string }> = [];
    for (const s of this.byName.values()) {
      if (s.deleted || isExpired(s, now)) continue;
      const schema = this.metaOf(s).schema;
      if (typeof schema === 'string' && schema !== '') out.push({ stream: s.meta.name, schema });
    }
    return out;
  }

  /** Durable, visible streams by name from `p.prefix` / `p.startAfter`, at most `p.limit`. */
  list(p: ListParams, now: number, info: (s: StreamState) => StreamInfo): ListResult {
    if (this.#sortedNames === null) this.#sortedNames = [...this.byName.keys()].sort(compareNames);
    const names = this.#sortedNames;
    let lo = firstAtLeast(names, p.prefix, false);
    if (p.startAfter !== '') lo = Math.max(lo, firstAtLeast(names, p.startAfter, true));
    const out: StreamInfo[] = [];
    for (let i = lo; i < names.length && names[i]!.startsWith(p.prefix); i++) {
      const s = this.byName.get(names[i]!);
      if (s === undefined || !s.durable || s.deleted || isExpired(s, now) || s.meta.softDeleted) continue;
      if (out.length === p.limit) return { streams: out, hasMore: true };
      out.push(info(s));
    }
    return { streams: out, hasMore: false };
  }

  /** Durable streams neither expired nor soft-deleted. */
  countVisible(now: number): number {
    let n = 0;
    for (const s of this.byName.values()) if (s.durable && !isExpired(s, now) && !s.meta.softDeleted) n++;
    return n;
  }
}

/** Index of the first name >= key (or > key when `strict`). */
function firstAtLeast(names: readonly string[], key: string, strict: boolean): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareNames(names[mid]!, key);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
