/**
 * Printing records in the formats `read` and `tail` share: raw bodies (each followed by a
 * newline or a NUL, or length-prefixed), JSON lines (the node's JSON record, one per line),
 * or a human table with fixed columns so it can stream without knowing every row.
 */
import { type Context } from './context';
import { usageError } from './errors';

/** A record in the node's JSON read format (docs/protocol.md, "Read"). */
export interface JsonRecord {
  seq: number;
  timestamp: number;
  key?: string;
  key_b64?: string;
  headers?: Record<string, string>;
  headers_b64?: Record<string, string>;
  body?: string;
  body_b64?: string;
}

export type RecordFormat = 'raw' | 'json' | 'table';

export function recordFormat(ctx: Context, given: unknown): RecordFormat {
  if (given !== undefined) {
    if (given !== 'raw' && given !== 'json' && given !== 'table') throw usageError(`--format must be raw, json or table (got "${String(given)}")`);
    return given;
  }
  if (ctx.output === 'json') return 'json';
  return ctx.io.stdoutIsTty ? 'table' : 'raw';
}

function bodyOf(r: JsonRecord): Buffer {
  if (r.body !== undefined) return Buffer.from(r.body, 'utf8');
  if (r.body_b64 !== undefined) return Buffer.from(r.body_b64, 'base64');
  return Buffer.alloc(0);
}

export class RecordPrinter {
  #headerDone = false;

  constructor(
    private readonly write: (chunk: string | Buffer) => void,
    private readonly format: RecordFormat,
    private readonly delimiter: 'line' | 'nul' | 'length',
    private readonly columns: number,
  ) {}

  print(records: readonly JsonRecord[]): void {
    if (records.length === 0) return;
    if (this.format === 'json') {
      this.write(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      return;
    }
    if (this.format === 'raw') {
      const parts: Buffer[] = [];
      for (const r of records) {
        const body = bodyOf(r);
        if (this.delimiter === 'length') {
          const len = Buffer.alloc(4);
          len.writeUInt32BE(body.length);
          parts.push(len, body);
        } else {
          parts.push(body, this.delimiter === 'nul' ? NUL : LF);
        }
      }
      this.write(Buffer.concat(parts));
      return;
    }
    let out = '';
    if (!this.#headerDone) {
      out += `${'SEQ'.padStart(8)}  ${'TIME'.padEnd(24)}  ${'KEY'.padEnd(12)}  BODY\n`;
      this.#headerDone = true;
    }
    for (const r of records) {
      const key = r.key ?? (r.key_b64 !== undefined ? `b64:${r.key_b64}` : '-');
      const body = r.body !== undefined ? r.body : r.body_b64 !== undefined ? `b64:${r.body_b64}` : '(null)';
      const row = `${String(r.seq).padStart(8)}  ${new Date(r.timestamp).toISOString().padEnd(24)}  ${cut(key, 12).padEnd(12)}  ${body.replace(/[\r\n\t]/g, ' ')}`;
      out += (row.length > this.columns ? row.slice(0, this.columns - 1) + '…' : row) + '\n';
    }
    this.write(out);
  }
}

const LF = Buffer.from('\n');
const NUL = Buffer.from([0]);
const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
