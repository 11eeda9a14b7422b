/**
 * One schema type's parser and compatibility rule, behind one shape, so the registry's
 * operations never ask which type they hold (formats/index.ts picks the format by type).
 */

/** A referenced schema, looked up by the registry: `name` is how the referring schema names it. */
export interface ResolvedReference {
  name: string;
  schema: string;
}

export type Parsed =
  | {
      ok: true;
      /** The schema text as stored and served. */
      canonical: string;
      /** The form `normalize=true` stores and compares (semantically equal schemas are equal here). */
      normalized: string;
      /** The parsed schema, as the format's compatibility rule needs it. */
      model: unknown;
    }
  | { ok: false; message: string };

export type ParsedSchema = Parsed & { ok: true };

export interface SchemaFormat {
  parse(text: string, references: readonly ResolvedReference[]): Parsed;
  /** Why `reader` cannot read what `writer` wrote (empty: it can), in the type's own rule. */
  readProblems(reader: ParsedSchema, writer: ParsedSchema): string[];
}

/** A compiled check of one record's payload (the bytes after the wire format's magic byte and id). */
export interface RecordDecoder {
  /** null: the payload decodes against the schema; else why not. */
  check(payload: Buffer): string | null;
  /** The record's name for RecordNameStrategy (Avro full name, Protobuf message, JSON title), or null. */
  recordName(payload: Buffer): string | null;
}
