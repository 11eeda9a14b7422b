/**
 * Loads config.toml (spec "Configuration", startup step 1): the file named by
 * SVC_CONNECTORS_CONFIG_PATH, else /etc/svc-connectors/config.toml when it exists, else the
 * built-in defaults; then the SVC_CONNECTORS_ environment overrides; then one validation that
 * reports every error at once, each with where it came from. Reading and layering the sources
 * is the shared loader's (src/program/config); this file declares the names and the messages.
 */
import { ConfigSchema, type ConnectorsConfig } from './config-schema';
import { notConfigEnv, parseEnvValue, PREFIX } from './env-overrides';
import { enumMessage, schemaAt } from './allowed-values';
import { redact } from './redact';
import { parseDuration } from './duration';
import { defineConfig, describeTomlProblem, HOST_PORT_FORM, parseHostPort, type Loaded, type SourceProblem } from '../program';

export const DEFAULT_CONFIG_PATH = '/etc/svc-connectors/config.toml';

export type { ConnectorsConfig };

export interface LoadedConfig {
  config: ConnectorsConfig;
  /** The file read, or null when built-in defaults were used. */
  path: string | null;
  /** Environment variables that changed the config. */
  overrides: string[];
}

export class ConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`invalid configuration:\n  - ${errors.join('\n  - ')}`);
  }
}

/** File keys are the schema's own; `SVC_CONNECTORS_<SECTION>__<KEY>` sets any key (env-overrides.ts); no flags. */
const loader = defineConfig({
  schema: ConfigSchema,
  naming: {},
  file: { env: 'SVC_CONNECTORS_CONFIG_PATH', defaultPath: DEFAULT_CONFIG_PATH },
  env: { kind: 'nested', prefix: PREFIX, separator: '__', ignore: notConfigEnv, parse: parseEnvValue },
  validator: 'typebox',
});

/** Paths of duration fields, checked beyond the schema's "string or number". */
const DURATIONS = ['state.http.timeout', 'state.http.retry.initial_backoff', 'state.http.retry.max_backoff', 'connectors.http.timeout', 'connectors.http.retry.initial_backoff', 'connectors.http.retry.max_backoff'];

function get(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((a, k) => (a !== null && typeof a === 'object' ? (a as Record<string, unknown>)[k] : undefined), o);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const loaded = loader.load([], env);
  const overrides = [
    ...loaded.entries.filter((e) => e.source === 'env').map((e) => e.name),
    ...loaded.sourceProblems.flatMap((p) => (p.kind === 'unknown-key' && p.entry.source === 'env' ? [p.entry.name] : [])),
  ].sort();
  return { config: report(loaded, loaded.file ?? 'built-in defaults', overrides), path: loaded.file, overrides };
}

/** Defaults filled in, env-style strings converted, and every error reported together. */
export function validateConfig(raw: Record<string, unknown>, where: string, overrides: string[] = []): ConnectorsConfig {
  return report(loader.loadDocument(raw, where), where, overrides);
}

/** Every problem of `loaded` in the words of this program, thrown together; or the config. */
function report(loaded: Loaded<ConnectorsConfig>, where: string, overrides: string[]): ConnectorsConfig {
  const errors: string[] = [];
  const envFor = (path: readonly string[]): string => {
    const name = `SVC_CONNECTORS_${path.join('__').toUpperCase()}`;
    const o = overrides.find((x) => name.startsWith(x) || x.startsWith(name));
    return o === undefined ? '' : ` (from ${o})`;
  };
  const at = (path: readonly string[]) => (path.length === 0 ? '(top level)' : path.join('.'));
  const describe = (p: SourceProblem): string => {
    switch (p.kind) {
      case 'file': {
        const what = p.problem.kind === 'unreadable' ? `cannot read ${p.file}: ${p.problem.code}` : `${p.file}: ${describeTomlProblem(p.problem)}`;
        return p.via === null ? what : `config file (${p.via}): ${what}`;
      }
      case 'unknown-key': return `${where}: ${at(p.entry.path)}: Unexpected property${envFor(p.entry.path)}`;
      case 'not-a-table': return `${where}: ${at(p.entry.path)}: Expected object${envFor(p.entry.path)}`;
      default: return `${where}: ${JSON.stringify(p)}`; // flags: this program takes none
    }
  };
  errors.push(...loaded.sourceProblems.map(describe));
  // Unions report once per branch; the first message per path is the useful one.
  const seen = new Set<string>();
  for (const v of loaded.invalidValues) {
    const what = v.kind === 'unknown' ? 'Unexpected property' : enumMessage(schemaAt(ConfigSchema, v.path), get(loaded.config, v.path.join('.')), v.message);
    const msg = `${where}: ${at(v.path)}: ${what}${envFor(v.path)}`;
    if (!seen.has(at(v.path))) errors.push(msg);
    seen.add(at(v.path));
  }
  const value = loaded.config;
  for (const d of DURATIONS) {
    const v = get(value, d);
    if (v !== undefined && parseDuration(v) === null) errors.push(`${where}: ${d}: not a duration (${JSON.stringify(v)}; use e.g. 200ms, 5s)`);
  }
  const c = value;
  if (errors.length === 0) {
    if (c.state.storage === 'http' && c.state.http.url === '') errors.push(`${where}: state.http.url: required when state.storage = "http"`);
    if (c.connectors.config_type === 'http' && c.connectors.http.base_url === '') errors.push(`${where}: connectors.http.base_url: required when connectors.config_type = "http"`);
    if (c.http.tls.enabled && (c.http.tls.cert_file === '' || c.http.tls.key_file === '')) errors.push(`${where}: http.tls: cert_file and key_file are required when enabled`);
    if (!parseHostPort(c.http.address).ok) errors.push(`${where}: http.address: expected ${HOST_PORT_FORM}, got ${JSON.stringify(c.http.address)}`);
    for (const t of ['logs', 'traces'] as const) {
      const e = c.telemetry[t];
      if (c.telemetry.enabled && e.transport === 'grpc' && e.endpoint !== '' && !/^(https?:\/\/)?[^/\s]+:\d+\/?$/.test(e.endpoint)) {
        errors.push(`${where}: telemetry.${t}.endpoint: the grpc transport takes host:port or http(s)://host:port (e.g. http://collector:4317), got ${JSON.stringify(e.endpoint)}`);
      }
    }
    if (c.telemetry.enabled && c.telemetry.logs.endpoint === '' && c.telemetry.traces.endpoint === '') errors.push(`${where}: telemetry: enabled, but neither logs.endpoint nor traces.endpoint is set`);
    if (c.kafka.security_protocol.startsWith('sasl') && c.kafka.sasl.username === '') errors.push(`${where}: kafka.sasl.username: required when security_protocol = "${c.kafka.security_protocol}"`);
  }
  if (errors.length > 0) throw new ConfigError(errors);
  return c;
}

/** The config as it may be shown or logged: secrets replaced. */
export const redactedConfig = (c: ConnectorsConfig): unknown => redact(c);
