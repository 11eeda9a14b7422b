/**
 * Where `read` and `tail` start: `--seq` (a number or `now`), the last N records (`tail -n`,
 * `read --last`), or the first record at or after a time (`--since`). Each resolves to a seq
 * before the first read, so a reconnect resumes at a number.
 *
 * `--since` searches by seq: a stream keeps one timestamp per record (unix ms, docs/protocol.md)
 * but no index by time, so the client bisects [start, tail) with one-record reads — about
 * log2(records) requests. Timestamps the node assigns (HTTP appends) never decrease along the
 * seqs; Kafka producers may write their own (CreateTime), and where those go back in time the
 * answer is a record at or after the time, not necessarily the first.
 */
import { send, streamPath } from './http';
import { nonNegative } from './args';
import { usageError } from './errors';
import { type Context } from './context';
import { type JsonRecord } from './json-record';

export type StartSpec = { kind: 'seq'; seq: number } | { kind: 'now' } | { kind: 'last'; count: number } | { kind: 'since'; ms: number };

/** The start the flags ask for (at most one of them); `fallback` without any. */
export function startSpec(o: Record<string, unknown>, lastFlag: 'lines' | 'last', fallback: StartSpec): StartSpec {
  const given = [o['seq'] !== undefined && '--seq', o[lastFlag] !== undefined && (lastFlag === 'lines' ? '-n/--lines' : '--last'), o['since'] !== undefined && '--since'].filter((x): x is string => x !== false);
  if (given.length > 1) throw usageError(`${given.join(' and ')} both say where to start: give one`);
  if (o['seq'] !== undefined) return o['seq'] === 'now' ? { kind: 'now' } : { kind: 'seq', seq: nonNegative(o['seq'], '--seq') };
  if (o[lastFlag] !== undefined) return { kind: 'last', count: nonNegative(o[lastFlag], lastFlag === 'lines' ? '--lines' : '--last') };
  if (o['since'] !== undefined) return { kind: 'since', ms: parseSince(String(o['since'])) };
  return fallback;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: RFC 3339 (`2026-12-01T10:00:00Z`), unix milliseconds, or a duration ago (`90s`, `15m`, `2h`, `1d`). */
export function parseSince(v: string, now = Date.now()): number {
  if (/^\d{1,15}$/.test(v)) return Number(v);
  const rel = /^(\d{1,9})(ms|s|m|h|d)$/.exec(v);
  if (rel !== null) return now - Number(rel[1]) * UNITS[rel[2]!]!;
  const t = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw usageError(`--since takes an RFC 3339 time, unix milliseconds, or a duration ago such as 15m (got "${v}")`);
  return t;
}

interface Bounds {
  start: number;
  next: number;
}

async function bounds(ctx: Context, stream: string): Promise<Bounds> {
  const res = await send(ctx, 'protocol', streamPath(stream), { method: 'HEAD' });
  return { start: Number(res.headers.get('svc-start-seq') ?? 0), next: Number(res.headers.get('svc-next-seq')) };
}

/** The first record at or after `seq`, or null when there is none before the tail. */
async function recordAt(ctx: Context, stream: string, seq: number): Promise<JsonRecord | null> {
  const res = await send(ctx, 'protocol', `${streamPath(stream)}?${new URLSearchParams({ seq: String(seq), count: '1', format: 'json' })}`);
  const page = (await res.json()) as JsonRecord[];
  return page[0] ?? null;
}

/** The seq the spec names in `stream` now. */
export async function resolveStart(ctx: Context, stream: string, spec: StartSpec): Promise<number> {
  if (spec.kind === 'seq') return spec.seq;
  const b = await bounds(ctx, stream);
  if (spec.kind === 'now') return b.next;
  if (spec.kind === 'last') return Math.max(b.start, b.next - spec.count);
  let lo = b.start;
  let hi = b.next;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const r = await recordAt(ctx, stream, mid);
    if (r === null || r.seq >= hi || r.timestamp >= spec.ms) hi = mid;
    else lo = r.seq + 1;
  }
  return lo;
}
