/**
 * Printing records in the formats `read` and `tail` share: raw bodies (each followed by a
 * newline or a NUL, or length-prefixed), JSON lines (the node's JSON record, one per line),
 * a human table with fixed columns so it can stream without knowing every row, or a template
 * (`-o template=…`, kcat's `-f`; template.ts). A printer for one of several streams a `tail`
 * follows labels its records with the stream name.
 */
import { type Context } from './context';
import { usageError } from './errors';
import { type Template, bodyOf, render } from './template';
import { type JsonRecord } from './json-record';

export { type JsonRecord } from './json-record';


export type RecordFormat = 'raw' | 'json' | 'table' | 'template';

export function recordFormat(ctx: Context, given: unknown): RecordFormat {
  if (ctx.template !== null) return 'template';
  if (given !== undefined) {
    if (given !== 'raw' && given !== 'json' && given !== 'table') throw usageError(`--format must be raw, json or table (got "${String(given)}")`);
    return given;
  }
  if (ctx.output === 'json') return 'json';
  return ctx.io.stdoutIsTty ? 'table' : 'raw';
}

export class RecordPrinter {
  #headerDone = false;

  constructor(
    private readonly write: (chunk: string | Buffer) => void,
    private readonly format: RecordFormat,
    private readonly delimiter: 'line' | 'nul' | 'length',
    private readonly columns: number,
    /** The template of the `template` format. */
    private readonly template: Template | null = null,
    /** The stream name, when records of several streams share the output: a label on each one. */
    private readonly stream: string | null = null,
    /** The stream the records come from (the template's `%t`). */
    private readonly name = '',
  ) {}

  print(records: readonly JsonRecord[]): void {
    if (records.length === 0) return;
    if (this.format === 'json') {
      const label = this.stream;
      this.write(records.map((r) => JSON.stringify(label === null ? r : { stream: label, ...r })).join('\n') + '\n');
      return;
    }
    if (this.format === 'template') {
      this.write(Buffer.concat(records.map((r) => render(this.template!, r, this.name))));
      return;
    }
    const prefix = this.stream === null ? null : Buffer.from(`${this.stream}: `);
    if (this.format === 'raw') {
      const parts: Buffer[] = [];
      for (const r of records) {
        const body = bodyOf(r);
        if (this.delimiter === 'length') {
          const len = Buffer.alloc(4);
          len.writeUInt32BE(body.length);
          parts.push(len, body);
        } else {
          if (prefix !== null) parts.push(prefix);
          parts.push(body, this.delimiter === 'nul' ? NUL : LF);
        }
      }
      this.write(Buffer.concat(parts));
      return;
    }
    let out = '';
    if (!this.#headerDone) {
      if (this.stream !== null) out += 'STREAM: ';
      out += `${'SEQ'.padStart(8)}  ${'TIME'.padEnd(24)}  ${'KEY'.padEnd(12)}  BODY\n`;
      this.#headerDone = true;
    }
    for (const r of records) {
      const key = r.key ?? (r.key_b64 !== undefined ? `b64:${r.key_b64}` : '-');
      const body = r.body !== undefined && r.body !== null ? r.body : r.body_b64 !== undefined ? `b64:${r.body_b64}` : '(null)';
      const row = `${this.stream === null ? '' : `${this.stream}: `}${String(r.seq).padStart(8)}  ${new Date(r.timestamp).toISOString().padEnd(24)}  ${cut(key, 12).padEnd(12)}  ${body.replace(/[\r\n\t]/g, ' ')}`;
      out += (row.length > this.columns ? row.slice(0, this.columns - 1) + '…' : row) + '\n';
    }
    this.write(out);
  }
}

const LF = Buffer.from('\n');
const NUL = Buffer.from([0]);
const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
