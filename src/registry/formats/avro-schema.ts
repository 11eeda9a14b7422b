/**
 * AVRO: parsing (with the named types of referenced schemas) and compatibility by Avro's own
 * schema resolution rules, which Confluent's AVRO check applies: a reader can read a writer's data
 * when avsc can build a resolver from the writer's schema to the reader's (fields matched by name
 * or alias, a reader field absent from the writer needs a default, promotions int → long → float →
 * double and string ↔ bytes, enum symbols the reader lacks need the reader's default, unions
 * resolved branch by branch). The only importer of `avsc`.
 */
import * as avro from 'avsc';
import { type Parsed, type ParsedSchema, type RecordDecoder, type ResolvedReference } from './format';

/** Parse `text` (JSON) as an Avro schema; referenced schemas' named types are known by their full names. */
export function parseAvro(text: string, references: readonly ResolvedReference[]): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `Invalid schema: not JSON (${(err as Error).message})` };
  }
  const registry: Record<string, avro.Type> = {};
  try {
    for (const r of references) avro.Type.forSchema(JSON.parse(r.schema) as avro.Schema, { registry });
    const type = avro.Type.forSchema(json as avro.Schema, { registry });
    const canonical = JSON.stringify(json);
    return { ok: true, canonical, normalized: canonical, model: type };
  } catch (err) {
    return { ok: false, message: `Invalid schema: ${(err as Error).message}` };
  }
}

/** Why `reader` cannot read data written with `writer` (empty: it can). */
export function avroReadProblems(reader: ParsedSchema, writer: ParsedSchema): string[] {
  try {
    (reader.model as avro.Type).createResolver(writer.model as avro.Type);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

/**
 * A check of one record's Avro payload (what follows the wire format's id): null when it decodes
 * to exactly its bytes, else why not. Also the schema's full name (RecordNameStrategy), or null.
 */
export function avroRecordDecoder(parsed: ParsedSchema): RecordDecoder {
  const type = parsed.model as avro.Type;
  const name = type.name ?? null;
  return {
    check(payload) {
      try {
        const r = type.decode(payload, 0);
        if (r.offset < 0) return 'the Avro payload is truncated';
        if (r.offset !== payload.length) return `${payload.length - r.offset} bytes follow the Avro value`;
        return null;
      } catch (err) {
        return `not Avro of the schema: ${(err as Error).message}`;
      }
    },
    recordName: () => name,
  };
}
