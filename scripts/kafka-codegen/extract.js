'use strict';
/**
 * Apache Kafka's message schemas → the summaries in spec/ that the generator reads.
 *
 * A summary keeps only what the codecs need, for the versions the listener advertises:
 * field names, types, version ranges (clipped to the advertised range), nullable and tagged
 * versions, tags and explicit defaults. Prose (`about`), comments, `entityType`, `mapKey` and
 * `ignorable` are dropped; common structs are inlined where they are used.
 */
const fs = require('node:fs');
const path = require('node:path');
const { parseJsonWithComments } = require('./json-comments');
const { parseVersions, intersect, sameRange } = require('./versions');

/** Where the schemas live in Apache Kafka's source tree; cited in the summaries. */
const ORIGIN = 'clients/src/main/resources/common/message';

const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'records', 'uuid']);
const INT_TYPES = new Set(['int8', 'int16', 'uint16', 'int32', 'uint32']);

function readSchema(dir, file) {
  const full = path.join(dir, file);
  if (!fs.existsSync(full)) throw new Error(`schema ${file} not found in ${dir}`);
  return parseJsonWithComments(fs.readFileSync(full, 'utf8'), file);
}

/** A schema default ("-1", "0x7fffffff", "null", "true", "") as a JSON value of the field's type. */
function normalizeDefault(type, raw, where) {
  if (raw === 'null') return null;
  if (INT_TYPES.has(type)) {
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new Error(`${where}: bad default ${raw}`);
    return n;
  }
  if (type === 'int64') return String(BigInt(raw));
  if (type === 'float64') return Number(raw);
  if (type === 'bool') {
    if (raw !== 'true' && raw !== 'false') throw new Error(`${where}: bad default ${raw}`);
    return raw === 'true';
  }
  if (type === 'string') return raw;
  throw new Error(`${where}: a default for a ${type} field is not supported`);
}

function clip(range, within) {
  const r = intersect(range, within);
  return r === null ? null : [r[0], Math.min(r[1], within[1])];
}

/** One schema field → its summary, or null when it has no version in `within`. */
function summarizeField(f, within, commonStructs, where) {
  const at = `${where}.${f.name}`;
  const versions = clip(parseVersions(f.versions), within);
  if (versions === null) return null;
  const elem = f.type.startsWith('[]') ? f.type.slice(2) : f.type;
  const out = { name: f.name, type: f.type, versions };
  const nullable = clip(parseVersions(f.nullableVersions), versions);
  if (nullable !== null) out.nullable = nullable;
  if (f.taggedVersions !== undefined) {
    const tagged = clip(parseVersions(f.taggedVersions), versions);
    // A field that is tagged in some versions and a plain field in others is legal in
    // Kafka's format but unused by these APIs; the generator supports the simple case only.
    if (!sameRange(tagged, versions)) throw new Error(`${at}: taggedVersions must equal versions`);
    if (!Number.isInteger(f.tag)) throw new Error(`${at}: tagged field without a tag`);
    out.tag = f.tag;
  }
  if (f.flexibleVersions !== undefined) {
    if (f.flexibleVersions !== 'none') throw new Error(`${at}: field flexibleVersions other than "none"`);
    out.flexible = false;
  }
  if (f.default !== undefined && (PRIMITIVES.has(f.type) || f.default === 'null')) {
    out.default = normalizeDefault(f.type, f.default, at);
  }
  if (!PRIMITIVES.has(elem)) {
    const fields = f.fields ?? commonStructs.get(elem);
    if (fields === undefined) throw new Error(`${at}: unknown type ${f.type}`);
    out.fields = summarizeFields(fields, versions, commonStructs, at);
  } else if (f.fields !== undefined) {
    throw new Error(`${at}: a ${f.type} field with nested fields`);
  }
  return out;
}

function summarizeFields(fields, within, commonStructs, where) {
  return fields.map((f) => summarizeField(f, within, commonStructs, where)).filter((f) => f !== null);
}

/** One message (request, response or header) for the versions in `within`. */
function summarizeMessage(schema, file, within) {
  const valid = parseVersions(schema.validVersions);
  if (valid === null || valid[0] > within[0] || valid[1] < within[1]) {
    throw new Error(`${file}: valid versions ${schema.validVersions} do not cover ${within[0]}-${within[1]}`);
  }
  const common = new Map((schema.commonStructs ?? []).map((s) => [s.name, s.fields]));
  const flexible = clip(parseVersions(schema.flexibleVersions), within);
  return {
    schema: `${ORIGIN}/${file}`,
    flexible: flexible === null ? null : flexible[0],
    fields: summarizeFields(schema.fields, within, common, schema.name),
  };
}

/** The summary of one API (an entry of apis.js) from the schemas in `dir`. */
function extractApi(api, dir) {
  const within = [api.min, api.max];
  const request = readSchema(dir, `${api.schema}Request.json`);
  const response = readSchema(dir, `${api.schema}Response.json`);
  if (request.apiKey !== api.key || response.apiKey !== api.key) throw new Error(`${api.schema}: api key is not ${api.key}`);
  return {
    name: api.schema,
    apiKey: api.key,
    versions: within,
    request: summarizeMessage(request, `${api.schema}Request.json`, within),
    response: summarizeMessage(response, `${api.schema}Response.json`, within),
  };
}

/** The request header (versions 0–2) and response header (versions 0–1). */
function extractHeaders(dir) {
  return {
    request: summarizeMessage(readSchema(dir, 'RequestHeader.json'), 'RequestHeader.json', [0, 2]),
    response: summarizeMessage(readSchema(dir, 'ResponseHeader.json'), 'ResponseHeader.json', [0, 1]),
  };
}

const NOTE =
  "Generated by scripts/kafka-codegen --schemas from Apache Kafka's message schemas (Apache License 2.0): " +
  'field names, types and versions only, clipped to the advertised range. Do not edit; the TypeScript codecs are generated from this file.';

/** One field per line (its nested `fields` indented below it), so a diff shows what changed. */
function formatFields(fields, indent) {
  const lines = fields.map((f) => {
    const { fields: nested, ...rest } = f;
    const head = JSON.stringify(rest);
    if (nested === undefined) return indent + head;
    return `${indent}${head.slice(0, -1)}, "fields": [\n${formatFields(nested, indent + '  ')}\n${indent}]}`;
  });
  return lines.join(',\n');
}

function formatMessage(m, indent) {
  const fields = m.fields.length === 0 ? '[]' : `[\n${formatFields(m.fields, indent + '  ')}\n${indent}]`;
  return `{ "schema": ${JSON.stringify(m.schema)}, "flexible": ${JSON.stringify(m.flexible)}, "fields": ${fields} }`;
}

/** A summary as the text stored in spec/ (parsed back with JSON.parse). */
function formatSpec(spec) {
  const head = Object.entries({ note: NOTE, ...spec })
    .filter(([k]) => k !== 'request' && k !== 'response')
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const parts = ['request', 'response'].map((k) => `  ${JSON.stringify(k)}: ${formatMessage(spec[k], '  ')}`);
  return `{\n${[...head, ...parts].join(',\n')}\n}\n`;
}

module.exports = { extractApi, extractHeaders, formatSpec };
