/**
 * The field table of a program's config schema: every setting with its flag, environment and
 * TOML names, walked once from the TypeBox schema. `--help`, the docs tests and the loader all
 * read this table, so a setting added to the schema has its names everywhere at once.
 *
 * An object schema with `properties` is a *group* (a TOML table: svc's `[limits]`, svc-cache's
 * `[server.tls]`); every other schema is a *field*. A host:port object (`hostPortSchema`) is a
 * field, not a group: users write it as one string.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';

/** Marks the object schema of a host:port field (a symbol key, which ajv and TypeBox ignore). */
const HOST_PORT = Symbol.for('svc.config.hostPort');

export type FieldKind = 'boolean' | 'integer' | 'number' | 'string' | 'enum' | 'hostport' | 'record' | 'array' | 'other';

export interface ConfigField {
  /** Path in the config object, e.g. ['limits', 'maxRecordBytes']. */
  readonly path: readonly string[];
  /** The table the field lives in (its path minus the last step, dotted), or null at top level. */
  readonly group: string | null;
  /** `--max-record-bytes`, or null when the program takes no flag for it. */
  readonly flag: string | null;
  /** `SVC_MAX_RECORD_BYTES`, or null when the environment cannot set it. */
  readonly env: string | null;
  /** Key in the TOML file, dotted for tables: `limits.max_record_bytes`. */
  readonly tomlKey: string;
  readonly kind: FieldKind;
  readonly schema: TSchema;
  readonly description: string;
}

/** How a program names a field (or a group, for `toml`) from its path. */
export interface Naming {
  flag?(path: readonly string[]): string | null;
  env?(path: readonly string[]): string | null;
  /** Dotted TOML key; the path joined with dots when absent. */
  toml?(path: readonly string[]): string;
}

/**
 * A host:port setting: an object `{ host, port }` in the config, one string `host:port` (IPv6 as
 * `[::1]:port`) in flags, environment and file.
 */
export function hostPortSchema(host: string, port: number, description: string) {
  const schema = Type.Object(
    {
      host: Type.String({ minLength: 1, pattern: '^[^\\s/\\[\\]]+$' }),
      port: Type.Integer({ minimum: 0, maximum: 65535 }),
    },
    { additionalProperties: false, default: { host, port }, description },
  );
  return Object.assign(schema, { [HOST_PORT]: true });
}

/** One of a fixed set of strings, kept as a JSON-schema `enum` so help and docs can list it. */
export const enumSchema = <const T extends readonly string[]>(values: T, options: { default: T[number]; description: string }) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const isGroup = (s: TSchema): boolean => s.type === 'object' && s.properties !== undefined && !(HOST_PORT in s);

function kindOf(s: TSchema): FieldKind {
  if (HOST_PORT in s) return 'hostport';
  switch (s.type) {
    case 'string': return s.enum ? 'enum' : 'string';
    case 'boolean': case 'integer': case 'number': return s.type;
    case 'object': return 'record';
    case 'array': return 'array';
    default: return 'other';
  }
}

/** Every field of `schema`, in schema order, with the names `naming` gives it. */
export function fieldsOf(schema: TObject, naming: Naming): ConfigField[] {
  const walk = (props: Record<string, TSchema>, prefix: readonly string[]): ConfigField[] =>
    Object.entries(props).flatMap(([key, s]): ConfigField[] => {
      const path = [...prefix, key];
      if (isGroup(s)) return walk(s.properties as Record<string, TSchema>, path);
      return [{
        path, group: prefix.length > 0 ? prefix.join('.') : null, kind: kindOf(s), schema: s,
        flag: naming.flag?.(path) ?? null, env: naming.env?.(path) ?? null,
        tomlKey: naming.toml?.(path) ?? path.join('.'),
        description: String(s.description ?? ''),
      }];
    });
  return walk(schema.properties, []);
}

/** Dotted paths of every group (table) in `schema`. */
export function groupsOf(schema: TObject): string[] {
  const walk = (props: Record<string, TSchema>, prefix: readonly string[]): string[] =>
    Object.entries(props).flatMap(([key, s]) => (isGroup(s) ? [[...prefix, key].join('.'), ...walk(s.properties as Record<string, TSchema>, [...prefix, key])] : []));
  return walk(schema.properties, []);
}

/** `maxRecordBytes` → ['max', 'record', 'bytes']. */
export const camelWords = (camel: string): string[] => camel.replace(/[A-Z]/g, (c) => ' ' + c.toLowerCase()).split(' ');
