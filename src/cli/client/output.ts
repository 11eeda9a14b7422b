/**
 * Output: a human table (or key/value list) by default, one JSON document with `-o json`.
 * Commands hand their data here instead of printing, so `-o json` works for every one.
 */
import { type Context } from './context';

export type Row = Record<string, unknown>;

export function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Columns padded to their widest cell; the last column is cut to the terminal width. */
export function table(rows: readonly Row[], columns: readonly string[], width = Infinity): string {
  const cells = rows.map((r) => columns.map((c) => cell(r[c]).replace(/[\r\n\t]/g, ' ')));
  const head = columns.map((c) => c.toUpperCase());
  const widths = columns.map((_, i) => Math.max(head[i]!.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => {
    const text = r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
    return text.length > width ? text.slice(0, Math.max(width - 1, 0)) + '…' : text;
  };
  return [line(head), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines, keys aligned. */
export function fields(obj: Row): string {
  const keys = Object.keys(obj);
  const w = Math.max(0, ...keys.map((k) => k.length));
  return keys.map((k) => `${(k + ':').padEnd(w + 1)} ${cell(obj[k])}`).join('\n') + '\n';
}

/** Prints `data` as JSON with -o json, else through `human`. */
export function emit(ctx: Context, data: unknown, human: () => string): void {
  ctx.io.stdout(ctx.output === 'json' ? JSON.stringify(data) + '\n' : human());
}
