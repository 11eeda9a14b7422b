/**
 * What crosses the registry's boundaries: schema types, references, stored records, the
 * compatibility levels and modes, and the refusals the HTTP edge maps to Confluent's error codes
 * (http/error-codes.ts). Names follow the Confluent Schema Registry REST API, which its clients
 * (Confluent's serializers, `@confluentinc/schemaregistry`, confluent-kafka's SchemaRegistryClient) parse.
 */

export const SCHEMA_TYPES = ['AVRO', 'JSON', 'PROTOBUF'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

/** A schema's reference to another registered one: the name it is imported by, and where it is registered. */
export interface SchemaReference {
  name: string;
  subject: string;
  version: number;
}

/** A distinct schema: one id, whatever subjects it is registered under. */
export interface SchemaRecord {
  id: number;
  schemaType: SchemaType;
  /** The schema text as served (AVRO and JSON: compact JSON; PROTOBUF: the text as registered). */
  schema: string;
  references: SchemaReference[];
}

/** One version of a subject. */
export interface VersionRecord {
  subject: string;
  version: number;
  id: number;
  /** Soft-deleted: hidden unless a request asks for deleted ones (`deleted=true`). */
  deleted: boolean;
}

export const COMPATIBILITY_LEVELS = ['BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE', 'NONE'] as const;
export type CompatibilityLevel = (typeof COMPATIBILITY_LEVELS)[number];

export const MODES = ['READWRITE', 'READONLY', 'READONLY_OVERRIDE', 'IMPORT'] as const;
export type Mode = (typeof MODES)[number];

/**
 * Expected refusals, each one of Confluent's error codes (http/error-codes.ts maps them). The
 * message is the text the client shows.
 */
export type RefusalKind =
  | 'subject_not_found' // 40401
  | 'version_not_found' // 40402
  | 'schema_not_found' // 40403
  | 'subject_soft_deleted' // 40404
  | 'subject_not_soft_deleted' // 40405
  | 'version_soft_deleted' // 40406
  | 'version_not_soft_deleted' // 40407
  | 'subject_compatibility_not_configured' // 40408
  | 'subject_mode_not_configured' // 40409
  | 'incompatible_schema' // 409
  | 'invalid_schema' // 42201
  | 'invalid_version' // 42202
  | 'invalid_compatibility_level' // 42203
  | 'invalid_mode' // 42204
  | 'operation_not_permitted' // 42205
  | 'reference_exists' // 42206
  | 'invalid_request' // 400 (a body that is not the request's JSON)
  | 'store_unavailable'; // 50001 (the metadata store refused or timed out)

export interface Refusal {
  ok: false;
  kind: RefusalKind;
  message: string;
}

export type Outcome<T> = { ok: true; value: T } | Refusal;

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const refuse = (kind: RefusalKind, message: string): Refusal => ({ ok: false, kind, message });
