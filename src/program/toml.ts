/**
 * TOML files, for every program's config file and svc-connectors' definitions. The only file in
 * the repository that imports smol-toml (ARCHITECTURE.md, owner table).
 */
import * as fs from 'node:fs';
import { parse, stringify, TomlError } from 'smol-toml';

export type TomlTable = Record<string, unknown>;

/** Why a file gave no table: it could not be read (`code`, e.g. ENOENT), or it is not TOML (`line`, `column`). */
export type TomlProblem =
  | { readonly kind: 'unreadable'; readonly code: string }
  | { readonly kind: 'syntax'; readonly line: number; readonly column: number; readonly message: string };

export type TomlResult = { readonly ok: true; readonly value: TomlTable } | { readonly ok: false; readonly problem: TomlProblem };

export function parseToml(text: string): TomlResult {
  try {
    return { ok: true, value: parse(text) as TomlTable };
  } catch (err) {
    if (err instanceof TomlError) {
      const message = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      return { ok: false, problem: { kind: 'syntax', line: err.line, column: err.column, message } };
    }
    return { ok: false, problem: { kind: 'syntax', line: 0, column: 0, message: String(err) } };
  }
}

export function readTomlFile(path: string): TomlResult {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    return { ok: false, problem: { kind: 'unreadable', code: (err as NodeJS.ErrnoException).code ?? String(err) } };
  }
  return parseToml(text);
}

/** `invalid TOML at line 2, column 10: <what>` or `ENOENT`: the problem in the words every program's messages use. */
export function describeTomlProblem(p: TomlProblem): string {
  return p.kind === 'unreadable' ? p.code : `invalid TOML at line ${p.line}, column ${p.column}: ${p.message}`;
}

export function stringifyToml(value: TomlTable): string {
  return stringify(value);
}
