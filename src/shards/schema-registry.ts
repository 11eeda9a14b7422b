/**
 * Registered schemas as every thread sees them, and the validation of appended records.
 *
 *   main thread: SchemaStore (schema-store.ts) ── files under <dataDir>/schemas/
 *        │  start: the documents go to each worker in workerData
 *        │  change: a `{type: 'schemas'}` control message to every worker, answered once applied
 *        ▼
 *   shard worker: SchemaRegistry ── one compiled validator per (schema, version), built once
 *        ▲
 *        └── Shard.append / Shard.create: records of a stream bound with schemaValidate are checked
 *            before any seq is assigned, so a batch is accepted or refused whole.
 *
 * The registration document (docs/protocol.md "Schemas") is `{"type": "json-schema", "schema": …}`;
 * `type` leaves room for other schema languages. JSON Schema draft 2020-12 and draft-07 are
 * compiled with ajv (Ajv2020 and Ajv, chosen by `$schema`; 2020-12 when it is absent).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { SvcError } from '../errors';
import { type RecordInput, decodeRecords } from '../util/record-batch';
import { isUtf8 } from '../util/utf8';

/** Schema languages a registration may name. */
export const SCHEMA_TYPES = ['json-schema'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

/** A registered schema, as stored, sent to workers and returned by `GET /_schemas/{name}`. */
export interface SchemaDocument {
  name: string;
  type: SchemaType;
  /** The JSON Schema itself (an object, or a boolean schema). */
  schema: unknown;
  /** 1 when registered, +1 on each replacement that changes it. */
  version: number;
  /** Unix milliseconds. */
  createdAtMs: number;
  /** Unix milliseconds of the last replacement (= createdAtMs until then). */
  updatedAtMs: number;
}

/**
 * Main thread → every worker. `delete` is refused by a worker that has a stream bound to the
 * schema; `bindings` asks which of the worker's streams are bound to which schema.
 */
export type SchemaControl = { type: 'schemas'; op: 'put'; doc: SchemaDocument } | { type: 'schemas'; op: 'delete'; name: string } | { type: 'schemas'; op: 'bindings' };

/** A live stream bound to a schema (`Svc-Schema`). */
export interface SchemaBinding {
  stream: string;
  schema: string;
}

/**
 * A worker's answer to a SchemaControl: for `delete`, a stream still bound to the schema (then
 * nothing was removed); for `bindings`, its streams' bindings.
 */
export interface SchemaControlResult {
  boundBy: string | null;
  bindings?: SchemaBinding[];
}

/** Schema names: 1–128 characters of [A-Za-z0-9._-], not "." or "..". */
export function checkSchemaName(name: string): void {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name) || name === '.' || name === '..') {
    throw new SvcError('invalid_parameter', 'a schema name is 1-128 characters of A-Z, a-z, 0-9, ".", "_" and "-" (not "." or "..")');
  }
}

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

/**
 * One ajv instance per draft per thread. `strict: false` because JSON Schema says unknown
 * keywords are ignored; `validateFormats: false` because `format` is an annotation by default
 * in 2020-12 (and optional in draft-07), and this build ships no format checkers.
 */
let ajv2020: Ajv2020 | null = null;
let ajv07: Ajv | null = null;
const AJV_OPTIONS = { strict: false, allErrors: false, validateFormats: false, logger: false } as const;

function ajvFor(schema: unknown): Ajv {
  const declared = typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>)['$schema'] : undefined;
  if (declared === undefined) return (ajv2020 ??= new Ajv2020(AJV_OPTIONS));
  const uri = typeof declared === 'string' ? declared.replace(/#$/, '') : '';
  if (uri === DRAFT_2020) return (ajv2020 ??= new Ajv2020(AJV_OPTIONS));
  if (uri === DRAFT_07 || uri === DRAFT_07.replace('http:', 'https:')) return (ajv07 ??= new Ajv(AJV_OPTIONS));
  throw new SvcError('invalid_schema', `schema.$schema: ${JSON.stringify(declared)} is not supported; use ${DRAFT_2020} or ${DRAFT_07}#`);
}

/** Compile a JSON Schema; an invalid one is `invalid_schema` with ajv's message. */
export function compileSchema(type: SchemaType, schema: unknown): ValidateFunction {
  if (type !== 'json-schema') throw new SvcError('invalid_schema', `type: ${JSON.stringify(type)} is not supported`);
  const ajv = ajvFor(schema);
  try {
    const validate = ajv.compile(schema as object);
    if ((validate as { $async?: boolean }).$async === true) throw new SvcError('invalid_schema', 'schema: $async schemas are not supported');
    return validate;
  } catch (e) {
    if (e instanceof SvcError) throw e;
    throw new SvcError('invalid_schema', `schema: ${(e as Error).message}`);
  } finally {
    // The compiled function keeps what it needs; dropping the schema from the instance lets
    // another schema (or the next version of this one) reuse the same `$id`.
    try {
      ajv.removeSchema(schema as object);
    } catch {
      // nothing was added
    }
  }
}

/** Fields of a registration document that GET returns and PUT accepts and ignores, so a document round-trips. */
const READ_ONLY = new Set(['name', 'version', 'createdAtMs', 'updatedAtMs']);

/**
 * Check a parsed registration document and compile its schema; returns the type and schema.
 * Unknown fields are refused (a typo never registers something else than meant).
 */
export function parseRegistration(name: string, doc: unknown): { type: SchemaType; schema: unknown } {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new SvcError('invalid_schema', 'the body must be a JSON object {"type": "json-schema", "schema": {...}}');
  }
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) {
    if (k !== 'type' && k !== 'schema' && !READ_ONLY.has(k)) throw new SvcError('invalid_schema', `${k}: unknown field`);
  }
  if (d['name'] !== undefined && d['name'] !== name) throw new SvcError('invalid_schema', `name: ${JSON.stringify(d['name'])} differs from the name in the path`);
  const type = d['type'];
  if (type === undefined) throw new SvcError('invalid_schema', `type: required (one of ${SCHEMA_TYPES.join(', ')})`);
  if (typeof type !== 'string' || !(SCHEMA_TYPES as readonly string[]).includes(type)) {
    throw new SvcError('invalid_schema', `type: ${JSON.stringify(type)} is not supported (one of ${SCHEMA_TYPES.join(', ')})`);
  }
  const schema = d['schema'];
  if (schema === undefined) throw new SvcError('invalid_schema', 'schema: required');
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    throw new SvcError('invalid_schema', 'schema: must be a JSON Schema (an object or a boolean)');
  }
  compileSchema(type as SchemaType, schema);
  return { type: type as SchemaType, schema };
}

interface Compiled {
  doc: SchemaDocument;
  validate: ValidateFunction;
}

/** The schemas one thread knows, each compiled once per version. */
export class SchemaRegistry {
  readonly #schemas = new Map<string, Compiled>();

  constructor(docs: readonly SchemaDocument[] = []) {
    for (const d of docs) this.put(d);
  }

  has(name: string): boolean {
    return this.#schemas.has(name);
  }

  /** Add or replace; the same version again is a no-op (nothing is recompiled). */
  put(doc: SchemaDocument): void {
    const cur = this.#schemas.get(doc.name);
    if (cur !== undefined && cur.doc.version === doc.version && cur.doc.updatedAtMs === doc.updatedAtMs) return;
    this.#schemas.set(doc.name, { doc, validate: compileSchema(doc.type, doc.schema) });
  }

  delete(name: string): void {
    this.#schemas.delete(name);
  }

  /**
   * Validate the records of one append against `schemaName`, numbering them across the
   * request (records first, then the records of each binary batch): the first failure is
   * thrown as `schema_validation_failed` naming `records[i]`, the JSON pointer and ajv's message.
   */
  validateAppend(schemaName: string, records: readonly RecordInput[] | null, batches: readonly Buffer[]): void {
    const c = this.#schemas.get(schemaName);
    if (c === undefined) {
      throw new SvcError('conflict', `the stream is bound to schema ${schemaName}, which is not registered: register it again, or PATCH the stream`);
    }
    let i = 0;
    for (const r of records ?? []) checkValue(c, r.value, i++);
    for (const b of batches) for (const r of decodeRecords(b, 0)) checkValue(c, r.value, i++);
  }
}

function checkValue(c: Compiled, value: Uint8Array | null, i: number): void {
  const where = `records[${i}]`;
  const fail = (path: string, message: string): never => {
    throw new SvcError('schema_validation_failed', `${where}${path}: ${message}`, { record: i, path, schema: c.doc.name, version: c.doc.version });
  };
  if (value === null) return fail('', 'a null value is not a JSON document');
  if (!isUtf8(value)) return fail('', 'the body is not UTF-8 text, so not JSON');
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
  } catch (e) {
    return fail('', `the body is not JSON (${(e as Error).message})`);
  }
  if (c.validate(doc)) return;
  const err = c.validate.errors?.[0];
  if (err === undefined) return fail('', 'does not match the schema');
  fail(err.instancePath, describe(err));
}

/** ajv's message, plus the property it is about where ajv leaves that out. */
function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (typeof p['additionalProperty'] === 'string') return `${e.message ?? 'is invalid'} (${JSON.stringify(p['additionalProperty'])})`;
  return e.message ?? `fails ${e.keyword}`;
}

/** What a worker asks its shards before dropping a schema. */
export interface SchemaBindings {
  /** A live stream bound to `schema` (accepted creates and config changes included), or null. */
  streamBoundTo(schema: string): string | null;
  /** Every live stream bound to a schema. */
  schemaBindings(): SchemaBinding[];
}

/** Apply a registry change on a worker thread; `delete` keeps the schema while one of `shards` binds it. */
export function applySchemaControl(msg: SchemaControl, registry: SchemaRegistry, shards: Iterable<SchemaBindings>): SchemaControlResult {
  if (msg.op === 'put') {
    registry.put(msg.doc);
    return { boundBy: null };
  }
  if (msg.op === 'bindings') {
    const bindings: SchemaBinding[] = [];
    for (const s of shards) bindings.push(...s.schemaBindings());
    return { boundBy: null, bindings };
  }
  for (const s of shards) {
    const boundBy = s.streamBoundTo(msg.name);
    if (boundBy !== null) return { boundBy };
  }
  registry.delete(msg.name);
  return { boundBy: null };
}
