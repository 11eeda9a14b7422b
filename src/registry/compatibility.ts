/**
 * The compatibility levels (Confluent's definitions): which earlier versions a new schema is
 * checked against, and in which direction.
 *
 *   BACKWARD   the new schema reads data written with the latest version     (new = reader)
 *   FORWARD    the latest version reads data written with the new schema     (new = writer)
 *   FULL       both
 *   *_TRANSITIVE  the same against every live version, not only the latest
 *   NONE       no check
 *
 * Each type's reader/writer rule is its format's `readProblems` (formats/).
 */
import { FORMATS, type ParsedSchema } from './formats';
import { type CompatibilityLevel, type SchemaType } from './types';

/**
 * Problems that make `candidate` incompatible with `earlier` (oldest first) at `level`; empty when
 * it is compatible. Each message names the version it fails against.
 */
export function compatibilityProblems(type: SchemaType, level: CompatibilityLevel, candidate: ParsedSchema, earlier: ReadonlyArray<{ version: number; parsed: ParsedSchema }>): string[] {
  if (level === 'NONE' || earlier.length === 0) return [];
  const against = level.endsWith('_TRANSITIVE') ? earlier : earlier.slice(-1);
  const backward = level.startsWith('BACKWARD') || level.startsWith('FULL');
  const forward = level.startsWith('FORWARD') || level.startsWith('FULL');
  const format = FORMATS[type];
  const out: string[] = [];
  for (const e of [...against].reverse()) {
    if (backward) for (const p of format.readProblems(candidate, e.parsed)) out.push(`{direction: BACKWARD, version: ${e.version}, problem: ${p}}`);
    if (forward) for (const p of format.readProblems(e.parsed, candidate)) out.push(`{direction: FORWARD, version: ${e.version}, problem: ${p}}`);
  }
  return out;
}
