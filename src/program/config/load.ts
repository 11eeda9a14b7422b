/**
 * The config loader every program uses (svc, svc-cache, svc-connectors). A program declares its
 * schema and how its settings are named; the loader reads the sources, layers them and checks
 * the result, collecting every problem instead of stopping at the first:
 *
 *   flags ─┐
 *   env  ──┼─▶ entries (value + where it came from) ─▶ layered over the schema defaults ─▶ validator
 *   file ──┘          highest precedence last: file < env < flags             │
 *                                                                              ▼
 *                  config, problems (each with its entry), invalid fields, effective(path)
 *
 * The program then words the problems (its messages are its own) and adds the checks that
 * span several fields (e.g. svc's loopback rule), naming each value's source with `where`.
 */
import * as fs from 'node:fs';
import { type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { type TomlTable } from '../toml';
import { type ConfigField, fieldsOf, groupsOf, isGroup, type Naming } from './fields';
import { type Entry, type EnvStyle, type FieldIndex, type FromText, parseFlags, readDocument, readEnv, readFile, type SourceProblem } from './sources';
import { ajvValidator, type SchemaProblem, typeboxValidator, type Validator } from './validators';

export interface ConfigSpec<S extends TObject = TObject> {
  readonly schema: S;
  readonly naming: Naming;
  /** The config file: the flag and the variable that name it (the flag wins), and a path read when neither is given and it exists. */
  readonly file: { readonly flag?: string; readonly env?: string; readonly defaultPath?: string };
  readonly env: EnvStyle;
  /** A flag's or variable's text in its field's type (only for `env.kind: 'fields'` and flags); text that does not parse stays text. */
  readonly fromText?: FromText;
  /** A file value in its field's type; the value as parsed by default. */
  readonly fromFile?: (field: ConfigField, raw: unknown) => unknown;
  /** Whose words the schema problems are in (validators.ts). */
  readonly validator: 'ajv' | 'typebox';
  /** Also check each source on its own, so a bad value is reported even when a higher-precedence source overrides it. */
  readonly checkEachSource?: boolean;
}

/** A value the schema refuses, with the entry that gave it (null: no source set it, e.g. a required key left empty). */
export interface InvalidValue extends SchemaProblem {
  readonly entry: Entry | null;
}

export interface Loaded<T> {
  /** Every value given, over the defaults. Fields in `invalid` hold what the user wrote, not a `T` value. */
  readonly config: T;
  /** Problems with the sources themselves: arguments, unknown flags and keys, the file. */
  readonly sourceProblems: readonly SourceProblem[];
  /** Values the schema refuses: the first problem per entry and path, in entry order. */
  readonly invalidValues: readonly InvalidValue[];
  /** Dotted paths of the fields whose effective value the schema refuses. */
  readonly invalid: ReadonlySet<string>;
  /** Every value given, lowest precedence first. */
  readonly entries: readonly Entry[];
  /** The config file read (or tried), or null. */
  readonly file: string | null;
  /** The entry that set a field's effective value, or undefined when it has its default. */
  effective(path: string): Entry | undefined;
  /** True when nothing is wrong. */
  readonly ok: boolean;
}

export interface ConfigLoader<T> {
  readonly fields: readonly ConfigField[];
  /** The field at a dotted path. */
  field(path: string): ConfigField | undefined;
  /** The config with nothing given. */
  defaults(): T;
  /** Read flags (`argv` without the command name), the environment and the file they name. */
  load(argv: readonly string[], env: NodeJS.ProcessEnv): Loaded<T>;
  /** Check a document as if it were the config file `file` (embedding, tests). */
  loadDocument(doc: TomlTable, file: string): Loaded<T>;
}

const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let at = target;
  for (const p of path.slice(0, -1)) {
    if (!isTable(at[p])) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = structuredClone(value);
}

/** Defaults for every key the document lacks, into tables it has (what ajv's useDefaults and TypeBox's Value.Default do). */
function fillDefaults(schema: TSchema, doc: Record<string, unknown>): void {
  for (const [key, s] of Object.entries(schema.properties as Record<string, TSchema>)) {
    if (doc[key] === undefined) {
      if (s.default !== undefined) doc[key] = structuredClone(s.default);
      else if (isGroup(s)) doc[key] = {};
    }
    if (isGroup(s) && isTable(doc[key])) fillDefaults(s, doc[key] as Record<string, unknown>);
  }
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.length <= path.length && prefix.every((p, i) => path[i] === p);

/** Standard text conversion: booleans true/false/1/0 (any case), integers and numbers; other text unchanged. */
export const standardFromText: FromText = (field, text) => {
  switch (field.kind) {
    case 'boolean': return /^(true|1)$/i.test(text) ? true : /^(false|0)$/i.test(text) ? false : text;
    case 'integer': return /^[+-]?\d+$/.test(text) ? Number(text) : text;
    case 'number': return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
    default: return text;
  }
};

/** The loader of `spec.schema`; the config's type is derived from the schema. */
export function defineConfig<S extends TObject>(spec: ConfigSpec<S>): ConfigLoader<Static<S>> {
  type T = Static<S>;
  const fields = fieldsOf(spec.schema, spec.naming);
  const groupPaths = groupsOf(spec.schema);
  const index: FieldIndex = {
    fields,
    groups: new Set(groupPaths),
    groupsByToml: new Map(groupPaths.map((g) => [spec.naming.toml?.(g.split('.')) ?? g, g.split('.')])),
    byFlag: new Map(fields.flatMap((f) => (f.flag === null ? [] : [[f.flag, f]]))),
    byToml: new Map(fields.map((f) => [f.tomlKey, f])),
    byPath: new Map(fields.map((f) => [f.path.join('.'), f])),
  };
  if (index.byFlag.size !== fields.filter((f) => f.flag !== null).length) throw new Error('config: two fields share a flag name');
  if (index.byToml.size !== fields.length) throw new Error('config: two fields share a file key');
  const validator: Validator = spec.validator === 'ajv' ? ajvValidator(spec.schema) : typeboxValidator(spec.schema);
  const fromText = spec.fromText ?? standardFromText;
  const fromFile = spec.fromFile ?? ((_f, raw) => raw);

  const build = (entries: readonly Entry[]): Record<string, unknown> => {
    const doc: Record<string, unknown> = {};
    fillDefaults(spec.schema, doc); // first, so keys keep the schema's order
    for (const e of entries) setPath(doc, e.path, e.value);
    fillDefaults(spec.schema, doc); // into tables an entry replaced whole
    return doc;
  };

  /** Check `entries` layered; each problem is blamed on the last entry at, above or below its path. */
  const check = (entries: readonly Entry[]) => {
    const { value, problems } = validator.check(build(entries));
    const blamed = new Map<string, InvalidValue>();
    for (const p of problems) {
      let entry: Entry | null = null;
      for (const e of entries) if (startsWith(p.path, e.path) || startsWith(e.path, p.path)) entry = e;
      const key = `${entry === null ? -1 : entries.indexOf(entry)} ${p.path.join('.')}`;
      if (!blamed.has(key)) blamed.set(key, { ...p, entry });
    }
    const order = (v: InvalidValue) => (v.entry === null ? entries.length : entries.indexOf(v.entry));
    return { value, invalid: [...blamed.values()].sort((a, b) => order(a) - order(b)), problems };
  };

  const finish = (entries: Entry[], sourceProblems: SourceProblem[], file: string | null, layers: readonly (readonly Entry[])[]): Loaded<T> => {
    const merged = check(entries);
    const invalidValues = spec.checkEachSource ? layers.flatMap((layer) => check(layer).invalid) : merged.invalid;
    const fieldOf = (path: readonly string[]) => fields.find((f) => startsWith(path, f.path) || startsWith(f.path, path));
    const invalid = new Set(merged.problems.flatMap((p) => { const f = fieldOf(p.path); return f ? [f.path.join('.')] : []; }));
    const effective = new Map<string, Entry>();
    for (const e of entries) if (e.field) effective.set(e.field.path.join('.'), e);
    return {
      config: merged.value as T, sourceProblems, invalidValues, invalid, entries, file,
      effective: (path) => effective.get(path),
      ok: sourceProblems.length === 0 && invalidValues.length === 0,
    };
  };

  return {
    fields,
    field: (path) => index.byPath.get(path),
    defaults: () => build([]) as T,
    load(argv, env) {
      const problems: SourceProblem[] = [];
      const flags: Entry[] = [];
      const envs: Entry[] = [];
      const fileEntries: Entry[] = [];
      const fromFlag = parseFlags(argv, index, fromText, spec.file.flag ?? null, flags, problems);
      readEnv(env, spec.env, index, fromText, envs, problems);
      const fromEnv = spec.file.env !== undefined ? env[spec.file.env] || undefined : undefined;
      let file: string | null = fromFlag ?? fromEnv ?? null;
      const via = fromFlag !== undefined ? spec.file.flag! : fromEnv !== undefined ? spec.file.env! : null;
      if (file === null && spec.file.defaultPath !== undefined && fs.existsSync(spec.file.defaultPath)) file = spec.file.defaultPath;
      if (file !== null) readFile(file, via, index, fromFile, fileEntries, problems);
      // Lowest precedence first, so later entries win.
      const layers = [fileEntries, envs, flags];
      return finish(layers.flat(), problems, file, layers);
    },
    loadDocument(doc, file) {
      const problems: SourceProblem[] = [];
      const entries: Entry[] = [];
      readDocument(doc, file, index, fromFile, entries, problems);
      return finish(entries, problems, file, [entries]);
    },
  };
}
