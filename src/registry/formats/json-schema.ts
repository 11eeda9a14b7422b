/**
 * JSON: a JSON Schema (draft-07 unless `$schema` names 2019-09 or 2020-12; draft-04 and -06
 * documents are compiled as draft-07) must compile with ajv, its references added under their
 * names so that `{"$ref": "<name>"}` resolves. Compatibility: json-compat.ts.
 */
import Ajv, { type AnySchema } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import { type Parsed, type RecordDecoder, type ResolvedReference } from './format';
import { jsonReadProblems } from './json-compat';

const OPTIONS = { strict: false, validateFormats: false, logger: false } as const;

function ajvFor(schema: unknown): Ajv {
  const declared = typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>)['$schema'] : undefined;
  const uri = typeof declared === 'string' ? declared : '';
  if (uri.includes('2020-12')) return new Ajv2020(OPTIONS);
  if (uri.includes('2019-09')) return new Ajv2019(OPTIONS);
  return new Ajv(OPTIONS);
}

/** Older drafts' `$schema` is dropped for compiling (ajv knows draft-07 and later); the stored text keeps it. */
function compilable(schema: unknown): AnySchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema as AnySchema;
  const s = schema as Record<string, unknown>;
  const uri = typeof s['$schema'] === 'string' ? s['$schema'] : '';
  if (uri.includes('draft-04') || uri.includes('draft-06')) {
    const { $schema: _, ...rest } = s;
    return rest as AnySchema;
  }
  return s as AnySchema;
}

/** Key order does not change a JSON document's meaning: the normalized form sorts it. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]));
}

export function parseJsonSchema(text: string, references: readonly ResolvedReference[]): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `Invalid schema: not JSON (${(err as Error).message})` };
  }
  if (typeof json !== 'boolean' && (typeof json !== 'object' || json === null || Array.isArray(json))) {
    return { ok: false, message: 'Invalid schema: a JSON Schema is an object or a boolean' };
  }
  try {
    const ajv = ajvFor(json);
    for (const r of references) {
      const ref = JSON.parse(r.schema) as unknown;
      ajv.addSchema(compilable(typeof ref === 'object' && ref !== null ? { ...(ref as object), $id: r.name } : ref), r.name);
    }
    ajv.compile(compilable(json));
  } catch (err) {
    return { ok: false, message: `Invalid schema: ${(err as Error).message}` };
  }
  const refs = new Map(references.map((r) => [r.name, JSON.parse(r.schema) as unknown]));
  return { ok: true, canonical: JSON.stringify(json), normalized: JSON.stringify(sortedKeys(json)), model: { root: json, refs } };
}

export { jsonReadProblems };

/**
 * A check of one record's JSON payload against the schema `text` (with its references): null when
 * it is JSON the schema accepts, else the first failure. The record name (RecordNameStrategy) of a
 * JSON Schema is its `title`, as Confluent's JSON serializer names it.
 */
export function jsonRecordDecoder(text: string, references: readonly ResolvedReference[]): RecordDecoder {
  const json = JSON.parse(text) as unknown;
  const ajv = ajvFor(json);
  for (const r of references) {
    const ref = JSON.parse(r.schema) as unknown;
    ajv.addSchema(compilable(typeof ref === 'object' && ref !== null ? { ...(ref as object), $id: r.name } : ref), r.name);
  }
  const validate = ajv.compile(compilable(json));
  const title = typeof json === 'object' && json !== null && typeof (json as Record<string, unknown>)['title'] === 'string' ? ((json as Record<string, unknown>)['title'] as string) : null;
  return {
    check(payload) {
      let doc: unknown;
      try {
        doc = JSON.parse(payload.toString('utf8'));
      } catch (err) {
        return `not JSON: ${(err as Error).message}`;
      }
      if (validate(doc)) return null;
      const e = validate.errors?.[0];
      return e === undefined ? 'does not match the schema' : `${e.instancePath === '' ? '(root)' : e.instancePath}: ${e.message ?? 'does not match the schema'}`;
    },
    recordName: () => title,
  };
}
