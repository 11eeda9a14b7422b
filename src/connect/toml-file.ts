/** Reads and writes svc-connectors' TOML files. The only file under src/connect that imports smol-toml. */
import * as fs from 'node:fs';
import { parse, stringify, TomlError } from 'smol-toml';

/** The parsed file, or one message saying why it could not be read (with the path). */
export function readTomlFile(path: string): { value: Record<string, unknown> } | { error: string; missing?: boolean } {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { error: `cannot read ${path}: ${code ?? String(err)}`, missing: code === 'ENOENT' };
  }
  return parseToml(text, path);
}

export function parseToml(text: string, where: string): { value: Record<string, unknown> } | { error: string } {
  try {
    return { value: parse(text) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof TomlError) return { error: `${where}: invalid TOML at line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}` };
    return { error: `${where}: ${String(err)}` };
  }
}

export function toToml(value: Record<string, unknown>): string {
  return stringify(value);
}
