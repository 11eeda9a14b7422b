/**
 * The JSON batch media type `application/vnd.svc.batch+json` (spec/stream-service.md,
 * "Batch payloads"):
 *
 *   { "records": [ { "body": "…", "key"?: "…", "headers"?: { "name": "value" } } ] }
 *
 * Binary-safe twins carry standard, padded base64: `body_b64`, `key_b64`, and
 * `headers_b64` (base64 name → base64 value). Exactly one of body/body_b64 is required;
 * `"body": null` is a null value (a Kafka tombstone). At most one of key/key_b64 and of the
 * header fields: `headers` / `headers_b64` (objects) or `header_list` / `header_list_b64`
 * (`[name, value]` pairs in order, repeated names kept). A header value may be `null`.
 * These mirror the JSON read format (shards/render/json-records.ts), so a read page wrapped as
 * `{"records": page}` appends as it is: its read-only `seq` and `timestamp` are accepted and
 * ignored (the append assigns both). Unknown fields are rejected so that a typo (`"bdy"`)
 * never silently drops data.
 *
 * Validation is hand-written: the shape is small and this runs on every batch append.
 */
import type { RecordInput } from './record-batch';
import { isUtf8 } from './utf8';

export interface JsonBatchLimits {
  /** Most records accepted in one batch. */
  maxRecords: number;
  /** Largest record value accepted, in bytes (after base64 decoding). */
  maxRecordBytes: number;
}

export type JsonBatchErrorCode = 'invalid_json' | 'invalid_batch' | 'empty_batch' | 'record_too_large' | 'batch_too_large';

/** A rejected batch, in the protocol listener's error shape plus the HTTP status. */
export interface JsonBatchError {
  error: JsonBatchErrorCode;
  message: string;
  status: 400 | 413;
}

type Bytes = [value: Uint8Array, error: null] | [value: null, error: JsonBatchError];

/** `String.prototype.isWellFormed` (Node 20) is not in the ES2022 lib typings. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const BASE64 = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64[c.charCodeAt(0)] = 1;

/** Decoded length of a strict, padded, standard-alphabet base64 string, or -1. */
function base64Length(s: string): number {
  const n = s.length;
  if (n % 4 !== 0) return -1;
  let pad = 0;
  if (n > 0 && s.charCodeAt(n - 1) === 0x3d) pad = s.charCodeAt(n - 2) === 0x3d ? 2 : 1;
  for (let i = 0; i < n - pad; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || BASE64[c] === 0) return -1;
  }
  return (n / 4) * 3 - pad;
}

function invalid(message: string): JsonBatchError {
  return { error: 'invalid_batch', message, status: 400 };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `records[3].headers.x`, or `records[3].headers["a b"]` for names that would not read well. */
function member(path: string, name: string): string {
  return /^[A-Za-z_$][\w$.-]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/** A text field: UTF-8 bytes of a well-formed string. */
function text(v: unknown, path: string, max = Infinity): Bytes {
  if (typeof v !== 'string') return [null, invalid(`${path}: must be a string`)];
  if (!isWellFormed(v)) return [null, invalid(`${path}: contains a lone surrogate; use the _b64 field for binary data`)];
  if (max !== Infinity && Buffer.byteLength(v, 'utf8') > max) return [null, tooLarge(path, max)];
  return [Buffer.from(v, 'utf8'), null];
}

/** A base64 field, decoded. */
function binary(v: unknown, path: string, max = Infinity): Bytes {
  if (typeof v !== 'string') return [null, invalid(`${path}: must be a string`)];
  const length = base64Length(v);
  if (length < 0) return [null, invalid(`${path}: must be standard padded base64`)];
  if (length > max) return [null, tooLarge(path, max)];
  return [Buffer.from(v, 'base64'), null];
}

function tooLarge(path: string, max: number): JsonBatchError {
  return { error: 'record_too_large', message: `${path}: larger than ${max} bytes`, status: 413 };
}

type HeaderList = Array<[Uint8Array, Uint8Array | null]>;

/** `header_list` / `header_list_b64`: an array of `[name, value]` pairs, value a string or null. */
function parseHeaderList(v: unknown, path: string, b64: boolean): HeaderList | JsonBatchError {
  if (!Array.isArray(v)) return invalid(`${path}: must be an array of [name, value] pairs`);
  const out: HeaderList = [];
  for (let i = 0; i < v.length; i++) {
    const pair: unknown = v[i];
    const at = `${path}[${i}]`;
    if (!Array.isArray(pair) || pair.length !== 2) return invalid(`${at}: must be a [name, value] pair`);
    const [key, keyError] = b64 ? binary(pair[0], `${at}[0]`) : text(pair[0], `${at}[0]`);
    if (keyError !== null) return keyError;
    if (pair[1] === null) {
      out.push([key, null]);
      continue;
    }
    const [value, valueError] = b64 ? binary(pair[1], `${at}[1]`) : text(pair[1], `${at}[1]`);
    if (valueError !== null) return valueError;
    out.push([key, value]);
  }
  return out;
}

/** Fields of a batch record; `seq` and `timestamp` are the read format's, accepted and ignored. */
const RECORD_FIELDS: ReadonlySet<string> = new Set(['body', 'body_b64', 'key', 'key_b64', 'headers', 'headers_b64', 'header_list', 'header_list_b64', 'seq', 'timestamp']);

function parseHeaders(v: unknown, path: string, b64: boolean): HeaderList | JsonBatchError {
  if (!isObject(v)) return invalid(`${path}: must be an object`);
  const out: HeaderList = [];
  for (const name of Object.keys(v)) {
    const [key, keyError] = b64 ? binary(name, `${path}: name ${JSON.stringify(name)}`) : text(name, `${path}: name`);
    if (keyError !== null) return keyError;
    const raw = v[name];
    if (raw === null) {
      out.push([key, null]);
      continue;
    }
    const [value, valueError] = b64 ? binary(raw, member(path, name)) : text(raw, member(path, name));
    if (valueError !== null) return valueError;
    out.push([key, value]);
  }
  return out;
}

function parseRecord(v: unknown, i: number, maxRecordBytes: number): RecordInput | JsonBatchError {
  const path = `records[${i}]`;
  if (!isObject(v)) return invalid(`${path}: must be an object`);
  for (const name in v) if (!RECORD_FIELDS.has(name)) return invalid(`${member(path, name)}: unknown field`);
  const { body, body_b64, key, key_b64, headers, headers_b64, header_list, header_list_b64 } = v;
  if (body !== undefined && body_b64 !== undefined) return invalid(`${path}: body and body_b64 are mutually exclusive`);
  if (key !== undefined && key_b64 !== undefined) return invalid(`${path}: key and key_b64 are mutually exclusive`);
  const headerFields = [headers, headers_b64, header_list, header_list_b64].filter((h) => h !== undefined).length;
  if (headerFields > 1) return invalid(`${path}: headers and headers_b64 are mutually exclusive, and with header_list and header_list_b64`);

  let value: [Uint8Array | null, null] | [null, JsonBatchError];
  if (body === null) value = [null, null];
  else if (body !== undefined) value = text(body, `${path}.body`, maxRecordBytes);
  else if (body_b64 !== undefined) value = binary(body_b64, `${path}.body_b64`, maxRecordBytes);
  else return invalid(`${path}.body: required (or body_b64; "body": null for a null value)`);
  if (value[1] !== null) return value[1];

  let recordKey: Uint8Array | null = null;
  if (key !== undefined || key_b64 !== undefined) {
    const parsed = key !== undefined ? text(key, `${path}.key`) : binary(key_b64, `${path}.key_b64`);
    if (parsed[1] !== null) return parsed[1];
    recordKey = parsed[0];
  }

  let recordHeaders: HeaderList | null = null;
  if (headerFields > 0) {
    const parsed =
      headers !== undefined
        ? parseHeaders(headers, `${path}.headers`, false)
        : headers_b64 !== undefined
          ? parseHeaders(headers_b64, `${path}.headers_b64`, true)
          : header_list !== undefined
            ? parseHeaderList(header_list, `${path}.header_list`, false)
            : parseHeaderList(header_list_b64, `${path}.header_list_b64`, true);
    if (!Array.isArray(parsed)) return parsed;
    if (parsed.length > 0) recordHeaders = parsed;
  }
  return { key: recordKey, value: value[0], headers: recordHeaders };
}

/** Parse and validate a JSON batch body into records ready for `encodeRecordBatch`. */
export function parseJsonBatch(body: Buffer, limits: JsonBatchLimits): { records: RecordInput[] } | JsonBatchError {
  if (!isUtf8(body)) return { error: 'invalid_json', message: 'the body is not valid UTF-8', status: 400 };
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return { error: 'invalid_json', message: (e as Error).message, status: 400 };
  }
  if (!isObject(doc)) return invalid('the body must be a JSON object with a "records" array');
  for (const name in doc) if (name !== 'records') return invalid(`${member('', name).replace(/^\./, '')}: unknown field`);
  const list = doc.records;
  if (!Array.isArray(list)) return invalid('records: must be an array');
  if (list.length === 0) return { error: 'empty_batch', message: 'records: the batch has no records', status: 400 };
  if (list.length > limits.maxRecords) {
    return { error: 'batch_too_large', message: `records: ${list.length} records, at most ${limits.maxRecords} allowed`, status: 413 };
  }
  const records = new Array<RecordInput>(list.length);
  for (let i = 0; i < list.length; i++) {
    const r = parseRecord(list[i], i, limits.maxRecordBytes);
    if ('error' in r) return r;
    records[i] = r;
  }
  return { records };
}
