/** Checks for positional arguments and flag values, each failing with a usage error (exit 2). */
import { usageError } from './errors';

export function nonNegative(v: unknown, what: string): number {
  const s = String(v);
  if (!/^\d{1,15}$/.test(s)) throw usageError(`${what} must be an integer >= 0 (got "${s}")`);
  return Number(s);
}

export function positive(v: unknown, what: string): number {
  const n = nonNegative(v, what);
  if (n === 0) throw usageError(`${what} must be at least 1`);
  return n;
}

/** A stream name; `orders/eu` means `/orders/eu`. */
export function streamName(v: unknown): string {
  const s = String(v);
  if (s === '' || s === '/') throw usageError('a stream name is required, e.g. /orders');
  return s.startsWith('/') ? s : `/${s}`;
}

/** `--header k=v` (repeatable) into an object. */
export function headerPairs(list: unknown): Record<string, string> | undefined {
  const items = (list as string[] | undefined) ?? [];
  if (items.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw usageError(`--header takes key=value (got "${item}")`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** Collects a repeatable option's values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Reads a file, or stdin for "-". */
export async function readInput(file: string): Promise<string> {
  if (file !== '-') return (await import('node:fs')).readFileSync(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
