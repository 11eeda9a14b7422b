/**
 * A Durable Streams JSON-mode body split into its messages without building any JavaScript value
 * (PROTOCOL.md "JSON mode": a top-level array is flattened one level, each element one message;
 * any other JSON value is one message). One pass over the bytes validates the whole text against
 * RFC 8259 (strings, escapes, numbers, literals, nesting) and notes where each top-level element
 * starts and ends; a message is then a view of the body, not a copy.
 *
 * What is stored is the client's bytes with the whitespace between tokens removed (RFC 8259 §2:
 * insignificant whitespace), so `[ {"a" : 1} ]` stores `{"a":1}` as the parse-and-stringify of
 * earlier versions did; an element without such whitespace (the common case: a client's
 * `JSON.stringify`) is stored as a view of the body, and one with it is compacted in a second pass
 * over that element alone. Numbers and string escapes are kept as sent (`1.0`, `"\u0041"`): the
 * same JSON value to any reader, and a large integer keeps its digits.
 *
 * The text must be UTF-8 (RFC 8259 §8.1); other bytes are refused like any invalid JSON.
 */
import { isUtf8 } from '../../util/utf8';

/** The messages (views of `body`, or compacted copies), or why the body is not JSON. */
export type JsonSplit = { messages: Buffer[]; array: boolean } | { error: string };

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const IN_ARRAY = 1;
const IN_OBJECT = 2;

function isSpace(c: number): boolean {
  return c === SPACE || c === LF || c === CR || c === TAB;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Bytes each escape may name after the backslash: `" \ / b f n r t` (`u` is checked on its own). */
const SIMPLE_ESCAPE = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/** Bytes that stand for themselves inside a string: not `"`, `\` or a control character. */
const PLAIN = new Uint8Array(256).fill(1, SPACE);
PLAIN[QUOTE] = 0;
PLAIN[BACKSLASH] = 0;

/** End of the string starting at `i` (its opening quote), or -1. */
function stringEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  i++;
  while (i < n) {
    // The hot loop: most of a JSON body is string content.
    while (i < n && PLAIN[b[i]!] === 1) i++;
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = b[i + 1] ?? 0;
      if (e === 0x75) {
        if (i + 5 >= n || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1;
        i += 6;
      } else if (e < 128 && SIMPLE_ESCAPE[e] === 1) {
        i += 2;
      } else {
        return -1;
      }
    } else {
      return -1; // control characters must be escaped (RFC 8259 §7)
    }
  }
  return -1;
}

/** End of the number starting at `i`, or -1: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
function numberEnd(b: Uint8Array, i: number): number {
  if (b[i] === MINUS) i++;
  if (b[i] === ZERO) i++;
  else if (isDigit(b[i] ?? 0)) while (isDigit(b[i] ?? 0)) i++;
  else return -1;
  if (b[i] === DOT) {
    i++;
    if (!isDigit(b[i] ?? 0)) return -1;
    while (isDigit(b[i] ?? 0)) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === PLUS || b[i] === MINUS) i++;
    if (!isDigit(b[i] ?? 0)) return -1;
    while (isDigit(b[i] ?? 0)) i++;
  }
  return i;
}

const LITERALS: ReadonlyArray<Uint8Array> = ['true', 'false', 'null'].map((s) => Buffer.from(s));

/** End of `true`, `false` or `null` at `i`, or -1. */
function literalEnd(b: Uint8Array, i: number): number {
  for (const lit of LITERALS) {
    if (b[i] !== lit[0]) continue;
    for (let k = 1; k < lit.length; k++) if (b[i + k] !== lit[k]) return -1;
    return i + lit.length;
  }
  return -1;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i]!)) i++;
  return i;
}

const NOT_JSON = { error: 'the body is not valid JSON' } as const;

/**
 * Split a JSON-mode body: a top-level array into its elements (`array: true`; `[]` gives none),
 * any other value into one message. Nesting is tracked with an explicit stack, so no depth of
 * `[[[…]]]` can overflow the thread's call stack.
 */
export function splitJsonMessages(body: Buffer): JsonSplit {
  if (!isUtf8(body)) return NOT_JSON;
  const n = body.length;
  let stack = new Uint8Array(64);
  let depth = 0;
  let i = skipSpace(body, 0);
  const array = body[i] === OPEN_ARRAY;
  // A message (a top-level element, or the whole value) is [start, end); `spaced`: whitespace inside it.
  const messages: Buffer[] = [];
  const compacted: Compacted = { out: null, at: 0 };
  let start = i;
  let spaced = false;
  const base = array ? 1 : 0;
  for (;;) {
    // A value starts at i.
    if (depth === base) {
      start = i;
      spaced = false;
    }
    const c = body[i];
    let closed: boolean;
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (depth === stack.length) {
        const grown = new Uint8Array(stack.length * 2);
        grown.set(stack);
        stack = grown;
      }
      stack[depth++] = c === OPEN_ARRAY ? IN_ARRAY : IN_OBJECT;
      const j = skipSpace(body, i + 1);
      if (j > i + 1 && depth > base) spaced = true;
      i = j;
      const close = c === OPEN_ARRAY ? CLOSE_ARRAY : CLOSE_OBJECT;
      if (body[i] === close) {
        depth--;
        i++;
        closed = true;
      } else if (c === OPEN_OBJECT) {
        const k = objectKey(body, i);
        if (k < 0) return NOT_JSON;
        if (keySpaced) spaced = true;
        i = k;
        continue;
      } else {
        continue;
      }
    } else {
      const end = c === QUOTE ? stringEnd(body, i) : c === MINUS || isDigit(c ?? 0) ? numberEnd(body, i) : literalEnd(body, i);
      if (end < 0) return NOT_JSON;
      i = end;
      closed = true;
    }
    // A value ended at i: close containers and move to the next value.
    while (closed) {
      if (depth === base) messages.push(message(body, start, i, spaced, compacted));
      if (depth === 0) {
        return skipSpace(body, i) === n ? { messages, array } : NOT_JSON;
      }
      const j = skipSpace(body, i);
      if (j > i && depth > base) spaced = true;
      i = j;
      const d = body[i];
      const inside = stack[depth - 1];
      if (d === COMMA) {
        const k = skipSpace(body, i + 1);
        if (k > i + 1 && depth > base) spaced = true;
        i = k;
        if (inside === IN_OBJECT) {
          const key = objectKey(body, i);
          if (key < 0) return NOT_JSON;
          if (keySpaced) spaced = true;
          i = key;
        }
        closed = false;
      } else if ((inside === IN_ARRAY && d === CLOSE_ARRAY) || (inside === IN_OBJECT && d === CLOSE_OBJECT)) {
        depth--;
        i++;
      } else {
        return NOT_JSON;
      }
    }
  }
}

/**
 * `"key" :` at i, then any whitespace: where the value starts, or -1. Whether it had whitespace
 * around the colon is left in `keySpaced` (no object per key on this path).
 */
let keySpaced = false;
function objectKey(b: Uint8Array, i: number): number {
  if (b[i] !== QUOTE) return -1;
  const e = stringEnd(b, i);
  if (e < 0) return -1;
  const colon = skipSpace(b, e);
  if (b[colon] !== COLON) return -1;
  const value = skipSpace(b, colon + 1);
  keySpaced = colon > e || value > colon + 1;
  return value;
}

/** Where compacted messages are written: one buffer per body, taken on the first message that needs it. */
interface Compacted {
  out: Buffer | null;
  at: number;
}

/**
 * A message's bytes: a view when it holds no whitespace between tokens, else a compacted copy
 * (a view of the body's one compaction buffer). The text was validated, so a string ends at the
 * next quote that is not escaped.
 */
function message(body: Buffer, start: number, end: number, spaced: boolean, c: Compacted): Buffer {
  if (!spaced) return body.subarray(start, end);
  c.out ??= Buffer.allocUnsafe(body.length);
  const out = c.out;
  const from = c.at;
  let o = from;
  let i = start;
  while (i < end) {
    const ch = body[i++]!;
    if (ch === QUOTE) {
      out[o++] = ch;
      for (;;) {
        const x = body[i++]!;
        out[o++] = x;
        if (x === QUOTE) break;
        if (x === BACKSLASH) out[o++] = body[i++]!;
      }
    } else if (!isSpace(ch)) {
      out[o++] = ch;
    }
  }
  c.at = o;
  return out.subarray(from, o);
}
