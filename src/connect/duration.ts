/** Durations in config files: a number of milliseconds, or a string such as "200ms", "5s", "2m", "1h". */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or null when `v` is not a duration. */
export function parseDuration(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : null;
  if (typeof v !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(v);
  if (!m) return null;
  return Number(m[1]) * UNITS[m[2] ?? 'ms']!;
}

/** Exponential backoff with full jitter between `min` and `max` ms for attempt `n` (0-based). */
export function backoff(n: number, min: number, max: number): number {
  const ceiling = Math.min(max, min * 2 ** n);
  return min + Math.random() * Math.max(0, ceiling - min);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
