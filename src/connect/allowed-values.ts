/**
 * "Expected union value" says nothing a user can act on: for a field whose schema is a union
 * of literals (an enum), the message names the allowed values and the value given instead.
 */
import type { TSchema } from '@sinclair/typebox';

/** The literals of an enum schema, or null when `schema` is not one. */
export function enumValues(schema: TSchema | undefined): (string | number | boolean)[] | null {
  const anyOf = (schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length === 0) return null;
  const values = anyOf.map((s) => s.const);
  return values.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') ? (values as (string | number | boolean)[]) : null;
}

/** The sub-schema at `path` (object properties only), or undefined. */
export function schemaAt(root: TSchema, path: readonly string[]): TSchema | undefined {
  let s: TSchema | undefined = root;
  for (const k of path) s = (s as { properties?: Record<string, TSchema> } | undefined)?.properties?.[k];
  return s;
}

/** `message`, or for an enum "expected one of "a", "b"; got "c"". */
export function enumMessage(schema: TSchema | undefined, value: unknown, message: string): string {
  const values = enumValues(schema);
  if (values === null) return message;
  // Values that differ only in case (PLAIN / plain) are listed once.
  const shown = values.filter((v, i) => typeof v !== 'string' || !values.slice(0, i).some((w) => typeof w === 'string' && w.toLowerCase() === v.toLowerCase()));
  return `expected one of ${shown.map((v) => JSON.stringify(v)).join(', ')}; got ${JSON.stringify(value)}`;
}
