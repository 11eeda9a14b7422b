/**
 * Connector definitions from the config directory (startup step 3, `[connectors] config_type =
 * "local"`), with versions (spec "Versioning"): the original `<name>.toml` and the versions the
 * API stored beside it, `<name>.v<N>.toml`; the active one is named in `<name>.active` (absent:
 * the original file's version). Environment overrides apply to every version as it is read.
 */
import { enumMessage } from './allowed-values';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { type Definition, DefinitionSchema, type SinkTopics, type SourceTopics } from './definition-schema';
import { applyConnectorEnv } from './env-overrides';
import { parseDuration } from './duration';
import { readTomlFile, toToml } from './toml-file';

export type ConnectorType = 'sink' | 'source';

export interface StoredVersion {
  version: number;
  definition: Definition;
  file: string;
  /** When the file was written (ms since epoch). */
  created: number;
}

/** Every stored version of one connector, and which one is active. */
export interface ConnectorVersions {
  type: ConnectorType;
  key: string;
  /** The original definition file; versions are written beside it. */
  original: string;
  versions: Map<number, StoredVersion>;
  active: number;
}

export class DefinitionError extends Error {
  constructor(readonly errors: string[]) {
    super(`invalid connector definitions:\n  - ${errors.join('\n  - ')}`);
  }
}

/** Validates one raw definition (after env overrides); every problem is returned. */
export function validateDefinition(raw: Record<string, unknown>, where: string): { definition: Definition } | { errors: string[] } {
  const value = Value.Default(DefinitionSchema, Value.Convert(DefinitionSchema, structuredClone(raw))) as Definition;
  const errors: string[] = [];
  for (const e of Value.Errors(DefinitionSchema, value)) {
    const at = e.path === '' ? '(top level)' : e.path.slice(1).replace(/\//g, '.');
    if (!errors.some((x) => x.startsWith(`${where}: ${at}: `))) errors.push(`${where}: ${at}: ${enumMessage(e.schema, e.value, e.message)}`);
  }
  if (errors.length > 0) return { errors };
  for (const f of ['plugin_timeout', 'batch.poll_interval', 'error.initial_backoff', 'error.max_backoff']) {
    const v = f.split('.').reduce<unknown>((a, k) => (a as Record<string, unknown>)[k], value);
    if (parseDuration(v) === null) errors.push(`${where}: ${f}: not a duration (${JSON.stringify(v)})`);
  }
  if (value.type === 'sink') {
    const blocks = value.topics as SinkTopics[];
    if (blocks.length === 0 || blocks.some((b) => !('names' in b) || (b.names.length === 0 && b.pattern === ''))) errors.push(`${where}: topics: a sink needs at least one [[topics]] block with names or pattern`);
    for (const b of blocks) {
      if ('pattern' in b && b.pattern !== '') {
        try {
          new RegExp(b.pattern);
        } catch {
          errors.push(`${where}: topics.pattern: not a regular expression: ${b.pattern}`);
        }
      }
    }
    if (value.error.tolerance === 'dlq' && value.error.dlq_topic === '') errors.push(`${where}: error.dlq_topic: required when error.tolerance = "dlq"`);
  } else {
    const blocks = value.topics as SourceTopics[];
    if (blocks.length !== 1 || !('name' in blocks[0]!)) errors.push(`${where}: topics: a source needs exactly one [[topics]] block with a name`);
  }
  return errors.length > 0 ? { errors } : { definition: value };
}

const VERSION_FILE = /^(.*)\.v(\d+)\.toml$/;

/** Reads every definition in `dir`; throws DefinitionError listing every problem. */
export function loadDefinitions(dir: string, env: NodeJS.ProcessEnv): Map<string, ConnectorVersions> {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.toml')).sort();
  } catch (err) {
    throw new DefinitionError([`cannot read the definitions directory ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)} (set [connectors] config_dir or SVC_CONNECTORS_CONNECTORS__CONFIG_DIR)`]);
  }
  const errors: string[] = [];
  const raws: { file: string; raw: Record<string, unknown>; original: string; isVersion: boolean }[] = [];
  for (const n of names) {
    const file = path.join(dir, n);
    const r = readTomlFile(file);
    if ('error' in r) {
      errors.push(r.error);
      continue;
    }
    const m = VERSION_FILE.exec(n);
    raws.push({ file, raw: r.value, original: m ? path.join(dir, `${m[1]}.toml`) : file, isVersion: m !== null });
  }
  const keysOf = (t: string): string[] => raws.filter((r) => r.raw.type === t && typeof r.raw.key === 'string').map((r) => r.raw.key as string);
  const out = new Map<string, ConnectorVersions>();
  for (const r of raws) {
    const type = r.raw.type === 'source' ? 'source' : 'sink';
    if (typeof r.raw.key === 'string') applyConnectorEnv(r.raw, type, r.raw.key, env, keysOf(type));
    const v = validateDefinition(r.raw, r.file);
    if ('errors' in v) {
      errors.push(...v.errors);
      continue;
    }
    const d = v.definition;
    const id = `${d.type}:${d.key}`;
    let entry = out.get(id);
    if (entry === undefined) {
      entry = { type: d.type, key: d.key, original: r.original, versions: new Map(), active: -1 };
      out.set(id, entry);
    } else if (entry.original !== r.original) {
      errors.push(`${r.file}: key: ${d.type} "${d.key}" is already defined in ${entry.original}`);
      continue;
    }
    if (entry.versions.has(d.version)) {
      errors.push(`${r.file}: version: ${d.type} "${d.key}" version ${d.version} is defined twice`);
      continue;
    }
    entry.versions.set(d.version, { version: d.version, definition: d, file: r.file, created: fs.statSync(r.file).mtimeMs });
    if (!r.isVersion && entry.active === -1) entry.active = d.version;
  }
  for (const e of out.values()) {
    const marker = activeMarker(e.original);
    if (fs.existsSync(marker)) {
      const n = Number(fs.readFileSync(marker, 'utf8').trim());
      if (e.versions.has(n)) e.active = n;
      else errors.push(`${marker}: names version ${n}, which is not stored`);
    }
    if (e.active === -1) e.active = Math.max(...e.versions.keys());
  }
  if (errors.length > 0) throw new DefinitionError(errors);
  return out;
}

const activeMarker = (original: string): string => original.replace(/\.toml$/, '.active');

/** Writes a new version beside the original file (fsynced) and returns it. */
export function storeVersion(entry: ConnectorVersions, definition: Definition): StoredVersion {
  // Definitions from the HTTP provider have no file: their versions live in memory.
  const file = entry.original === '' ? '' : entry.original.replace(/\.toml$/, `.v${definition.version}.toml`);
  if (file !== '') writeDurably(file, toToml(definition as unknown as Record<string, unknown>));
  const sv = { version: definition.version, definition, file, created: Date.now() };
  entry.versions.set(definition.version, sv);
  return sv;
}

/** Removes a stored version's file (never the active one; the caller checks). */
export function removeVersion(entry: ConnectorVersions, version: number): void {
  const sv = entry.versions.get(version);
  if (sv === undefined) return;
  if (sv.file === '') {
    /* in memory only */
  } else if (sv.file !== entry.original) fs.rmSync(sv.file, { force: true });
  else fs.renameSync(sv.file, `${sv.file}.removed`);
  entry.versions.delete(version);
}

export function setActive(entry: ConnectorVersions, version: number): void {
  if (entry.original !== '') writeDurably(activeMarker(entry.original), `${version}\n`);
  entry.active = version;
}

function writeDurably(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeSync(fd, text);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}
