/** Reads svc-cache's TOML config file. The only file under src/s3 that imports smol-toml. */
import * as fs from 'node:fs';
import { parse, TomlError } from 'smol-toml';

/** The parsed file, or one message saying why it could not be read. */
export function readTomlFile(path: string): { value: Record<string, unknown> } | { error: string } {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    return { error: `cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  try {
    return { value: parse(text) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof TomlError) return { error: `${path}: invalid TOML at line ${err.line}, column ${err.column}` };
    return { error: `${path}: ${String(err)}` };
  }
}
