/**
 * Where values come from: command-line flags, environment variables and the TOML file. Each
 * value given becomes an `Entry` that remembers its source, so every message can name the flag,
 * variable or file key to fix. Nothing here stops at the first problem.
 */
import { readTomlFile, type TomlProblem, type TomlTable } from '../toml';
import { type ConfigField } from './fields';

export type Source = 'flag' | 'env' | 'file';

/** One value from one source. */
export interface Entry {
  /** The field the value belongs to (the field it lies inside, for a path below a record); null for a whole group. */
  readonly field: ConfigField | null;
  /** Where in the config the value goes. */
  readonly path: readonly string[];
  readonly source: Source;
  /** `--shards`, `SVC_SHARDS`, or the dotted TOML key. */
  readonly name: string;
  /** The config file, for source `file`. */
  readonly file: string | null;
  /** What the user wrote. */
  readonly raw: unknown;
  /** `raw` in the field's type, where it parses; otherwise `raw` again, for the validator to refuse. */
  readonly value: unknown;
}

/** Something wrong before any value is checked against the schema. */
export type SourceProblem =
  | { readonly kind: 'argument'; readonly arg: string }
  | { readonly kind: 'unknown-flag'; readonly name: string }
  | { readonly kind: 'missing-value'; readonly name: string }
  | { readonly kind: 'takes-no-value'; readonly name: string }
  | { readonly kind: 'file'; readonly file: string; readonly via: string | null; readonly problem: TomlProblem }
  | { readonly kind: 'unknown-key'; readonly entry: Entry }
  | { readonly kind: 'not-a-table'; readonly entry: Entry };

/** What the program's text conversion gets: a flag or variable's text for one field. */
export type FromText = (field: ConfigField, text: string) => unknown;

export interface FieldIndex {
  readonly fields: readonly ConfigField[];
  /** Dotted config paths of the groups. */
  readonly groups: ReadonlySet<string>;
  /** Dotted TOML keys of the groups → their config path. */
  readonly groupsByToml: ReadonlyMap<string, readonly string[]>;
  readonly byFlag: ReadonlyMap<string, ConfigField>;
  readonly byToml: ReadonlyMap<string, ConfigField>;
  readonly byPath: ReadonlyMap<string, ConfigField>;
}

/** The field `path` is, or lies inside (a key below a record); undefined when the schema has no such place. */
export function fieldFor(index: FieldIndex, path: readonly string[]): ConfigField | null | undefined {
  for (let n = path.length; n > 0; n--) {
    const f = index.byPath.get(path.slice(0, n).join('.'));
    if (f) return f;
  }
  return index.groups.has(path.join('.')) ? null : undefined;
}

/**
 * `--name value`, `--name=value`, `--flag` / `--no-flag` for booleans, and the config file flag.
 * Returns the config file named, if any.
 */
export function parseFlags(argv: readonly string[], index: FieldIndex, fromText: FromText, fileFlag: string | null, entries: Entry[], problems: SourceProblem[]): string | undefined {
  let configPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') { problems.push({ kind: 'argument', arg }); continue; }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const next = argv[i + 1];
    const takeValue = (): string | undefined => {
      if (inline !== undefined) return inline;
      if (next !== undefined && !next.startsWith('--')) { i++; return next; }
      problems.push({ kind: 'missing-value', name });
      return undefined;
    };
    const entry = (field: ConfigField, raw: unknown, value: unknown): Entry => ({ field, path: field.path, source: 'flag', name, file: null, raw, value });
    if (name === fileFlag) { configPath = takeValue() ?? configPath; continue; }
    const field = index.byFlag.get(name);
    const negated = name.startsWith('--no-') ? index.byFlag.get('--' + name.slice(5)) : undefined;
    if (field?.kind === 'boolean') {
      entries.push(entry(field, inline ?? true, inline === undefined ? true : fromText(field, inline)));
    } else if (field) {
      const text = takeValue();
      if (text !== undefined) entries.push(entry(field, text, fromText(field, text)));
    } else if (negated?.kind === 'boolean') {
      if (inline !== undefined) problems.push({ kind: 'takes-no-value', name });
      else entries.push(entry(negated, false, false));
    } else {
      problems.push({ kind: 'unknown-flag', name });
      if (inline === undefined && next !== undefined && !next.startsWith('--')) i++; // its value
    }
  }
  return configPath;
}

/** How a program's environment names settings. */
export type EnvStyle =
  /** One variable per field (`ConfigField.env`); `skipEmpty`: an empty variable counts as unset. */
  | { readonly kind: 'fields'; readonly skipEmpty: boolean }
  /**
   * Any `<prefix><A><sep><B>…` variable sets the path a.b… (lower-cased), known to the schema or
   * not (an unknown one is reported like an unknown file key); `parse` types the text.
   */
  | { readonly kind: 'nested'; readonly prefix: string; readonly separator: string; readonly ignore: (name: string) => boolean; readonly parse: (text: string) => unknown };

export function readEnv(env: NodeJS.ProcessEnv, style: EnvStyle, index: FieldIndex, fromText: FromText, entries: Entry[], problems: SourceProblem[]): void {
  if (style.kind === 'fields') {
    for (const field of index.fields) {
      const text = field.env === null ? undefined : env[field.env];
      if (text === undefined || (style.skipEmpty && text === '')) continue;
      entries.push({ field, path: field.path, source: 'env', name: field.env!, file: null, raw: text, value: fromText(field, text) });
    }
    return;
  }
  const names = Object.keys(env).sort();
  for (const name of names) {
    const text = env[name];
    if (text === undefined || !name.startsWith(style.prefix) || style.ignore(name)) continue;
    const rest = name.slice(style.prefix.length);
    if (!rest.includes(style.separator)) continue;
    const path = rest.toLowerCase().split(style.separator);
    const field = fieldFor(index, path);
    const entry: Entry = { field: field ?? null, path, source: 'env', name, file: null, raw: text, value: style.parse(text) };
    if (field === undefined) problems.push({ kind: 'unknown-key', entry });
    else entries.push(entry);
  }
}

/**
 * The file's values, one entry per field (a record or an array is one value); a table the schema
 * has is walked, a key it has not is an unknown key. `fromFile` types a file value (svc's
 * host:port strings become addresses).
 */
export function readFile(path: string, via: string | null, index: FieldIndex, fromFile: (field: ConfigField, raw: unknown) => unknown, entries: Entry[], problems: SourceProblem[]): void {
  const read = readTomlFile(path);
  if (!read.ok) { problems.push({ kind: 'file', file: path, via, problem: read.problem }); return; }
  readDocument(read.value, path, index, fromFile, entries, problems);
}

/** The entries of a parsed document, as `readFile` makes them. */
export function readDocument(doc: TomlTable, file: string, index: FieldIndex, fromFile: (field: ConfigField, raw: unknown) => unknown, entries: Entry[], problems: SourceProblem[]): void {
  const visit = (table: TomlTable, tomlPrefix: string, pathPrefix: readonly string[]) => {
    for (const [key, raw] of Object.entries(table)) {
      const dotted = tomlPrefix + key;
      const field = index.byToml.get(dotted);
      const groupPath = index.groupsByToml.get(dotted);
      if (field) {
        entries.push({ field, path: field.path, source: 'file', name: dotted, file, raw, value: fromFile(field, raw) });
      } else if (groupPath) {
        const entry: Entry = { field: null, path: groupPath, source: 'file', name: dotted, file, raw, value: raw };
        if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) visit(raw as TomlTable, dotted + '.', groupPath);
        else problems.push({ kind: 'not-a-table', entry });
      } else {
        problems.push({ kind: 'unknown-key', entry: { field: null, path: [...pathPrefix, key], source: 'file', name: dotted, file, raw, value: raw } });
      }
    }
  };
  visit(doc, '', []);
}
