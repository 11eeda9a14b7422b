/**
 * Output templates for `read` and `tail` (`-o template=<fmt>` or `--template <fmt>`), in the
 * style of kcat's `-f`: placeholders are replaced by parts of each record, backslash escapes
 * by the characters they name, and nothing is added after a record (end the template with `\n`).
 *
 *   %s body   %k key   %o seq   %T timestamp (unix ms)   %d timestamp (RFC 3339)   %t stream
 *   %h headers (k=v,k=v)   %S body bytes   %K key bytes   %%  a %
 *   \n newline   \t tab   \r carriage return   \0 NUL   \\ a backslash
 *
 * Bodies and keys are written as their bytes (a body that is not UTF-8 is not re-encoded).
 */
import { usageError } from './errors';
import { type JsonRecord } from './json-record';

type Part = { text: Buffer } | { field: Field };
type Field = 's' | 'k' | 'o' | 'T' | 'd' | 't' | 'h' | 'S' | 'K';

export type Template = readonly Part[];

const FIELDS = new Set<string>(['s', 'k', 'o', 'T', 'd', 't', 'h', 'S', 'K']);
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', '\\': '\\' };

/** Parses a template; an unknown placeholder or escape is a usage error (exit 2). */
export function parseTemplate(fmt: string): Template {
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%' && c !== '\\') {
      text += c;
      continue;
    }
    const n = fmt[++i];
    if (n === undefined) throw usageError(`template: "${c}" at the end (write ${c}${c} for the character itself)`);
    if (c === '\\') {
      const e = ESCAPES[n];
      if (e === undefined) throw usageError(`template: unknown escape "\\${n}" (known: \\n \\t \\r \\0 \\\\)`);
      text += e;
    } else if (n === '%') text += '%';
    else if (FIELDS.has(n)) {
      if (text !== '') parts.push({ text: Buffer.from(text) });
      text = '';
      parts.push({ field: n as Field });
    } else throw usageError(`template: unknown placeholder "%${n}" (known: %s %k %o %T %d %t %h %S %K %%)`);
  }
  if (text !== '') parts.push({ text: Buffer.from(text) });
  return parts;
}

export function bodyOf(r: JsonRecord): Buffer {
  if (r.body !== undefined && r.body !== null) return Buffer.from(r.body, 'utf8');
  if (r.body_b64 !== undefined) return Buffer.from(r.body_b64, 'base64');
  return Buffer.alloc(0);
}

function keyOf(r: JsonRecord): Buffer {
  if (r.key !== undefined) return Buffer.from(r.key, 'utf8');
  if (r.key_b64 !== undefined) return Buffer.from(r.key_b64, 'base64');
  return Buffer.alloc(0);
}

function headersOf(r: JsonRecord): string {
  if (r.headers !== undefined) return Object.entries(r.headers).map(([k, v]) => `${k}=${v}`).join(',');
  if (r.headers_b64 !== undefined) return Object.entries(r.headers_b64).map(([k, v]) => `b64:${k}=b64:${v}`).join(',');
  return '';
}

/** One record through the template. */
export function render(t: Template, r: JsonRecord, stream: string): Buffer {
  const out: Buffer[] = [];
  for (const p of t) {
    if ('text' in p) {
      out.push(p.text);
      continue;
    }
    switch (p.field) {
      case 's': out.push(bodyOf(r)); break;
      case 'k': out.push(keyOf(r)); break;
      case 'o': out.push(Buffer.from(String(r.seq))); break;
      case 'T': out.push(Buffer.from(String(r.timestamp))); break;
      case 'd': out.push(Buffer.from(new Date(r.timestamp).toISOString())); break;
      case 't': out.push(Buffer.from(stream)); break;
      case 'h': out.push(Buffer.from(headersOf(r))); break;
      case 'S': out.push(Buffer.from(String(bodyOf(r).length))); break;
      case 'K': out.push(Buffer.from(String(keyOf(r).length))); break;
    }
  }
  return Buffer.concat(out);
}
