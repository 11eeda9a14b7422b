/**
 * Loads config.toml (spec "Configuration", startup step 1): the file named by
 * SVC_CONNECTORS_CONFIG_PATH, else /etc/svc-connectors/config.toml when it exists, else the
 * built-in defaults; then the SVC_CONNECTORS_ environment overrides; then one validation that
 * reports every error at once, each with where it came from.
 */
import * as fs from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { ConfigSchema, type ConnectorsConfig } from './config-schema';
import { applyConfigEnv } from './env-overrides';
import { redact } from './redact';
import { readTomlFile } from './toml-file';
import { parseDuration } from './duration';

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

/** Paths of duration fields, checked beyond the schema's "string or number". */
const DURATIONS = ['state.http.timeout', 'state.http.retry.initial_backoff', 'state.http.retry.max_backoff', 'connectors.http.timeout', 'connectors.http.retry.initial_backoff', 'connectors.http.retry.max_backoff'];

function get(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((a, k) => (a !== null && typeof a === 'object' ? (a as Record<string, unknown>)[k] : undefined), o);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let path: string | null = env.SVC_CONNECTORS_CONFIG_PATH ?? null;
  let raw: Record<string, unknown> = {};
  if (path !== null) {
    const r = readTomlFile(path);
    if ('error' in r) throw new ConfigError([`config file (SVC_CONNECTORS_CONFIG_PATH): ${r.error}`]);
    raw = r.value;
  } else if (fs.existsSync(DEFAULT_CONFIG_PATH)) {
    path = DEFAULT_CONFIG_PATH;
    const r = readTomlFile(path);
    if ('error' in r) throw new ConfigError([r.error]);
    raw = r.value;
  }
  const overrides = applyConfigEnv(raw, env);
  return { config: validateConfig(raw, path ?? 'built-in defaults', overrides), path, overrides };
}

/** Defaults filled in, env-style strings converted, and every error reported together. */
export function validateConfig(raw: Record<string, unknown>, where: string, overrides: string[] = []): ConnectorsConfig {
  const value = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, structuredClone(raw))) as unknown;
  const errors: string[] = [];
  const envFor = (p: string): string => {
    const name = `SVC_CONNECTORS_${p.split('/').filter(Boolean).join('__').toUpperCase()}`;
    return overrides.some((o) => name.startsWith(o) || o.startsWith(name)) ? ` (from ${overrides.find((o) => name.startsWith(o) || o.startsWith(name))})` : '';
  };
  for (const e of Value.Errors(ConfigSchema, value)) {
    // Unions report once per branch; the first message per path is the useful one.
    const at = e.path === '' ? '(top level)' : e.path.slice(1).replace(/\//g, '.');
    const msg = `${where}: ${at}: ${e.message}${envFor(e.path)}`;
    if (!errors.some((x) => x.startsWith(`${where}: ${at}: `))) errors.push(msg);
  }
  for (const d of DURATIONS) {
    const v = get(value, d);
    if (v !== undefined && parseDuration(v) === null) errors.push(`${where}: ${d}: not a duration (${JSON.stringify(v)}; use e.g. 200ms, 5s)`);
  }
  const c = value as ConnectorsConfig;
  if (errors.length === 0) {
    if (c.state.storage === 'http' && c.state.http.url === '') errors.push(`${where}: state.http.url: required when state.storage = "http"`);
    if (c.connectors.config_type === 'http' && c.connectors.http.base_url === '') errors.push(`${where}: connectors.http.base_url: required when connectors.config_type = "http"`);
    if (c.http.tls.enabled && (c.http.tls.cert_file === '' || c.http.tls.key_file === '')) errors.push(`${where}: http.tls: cert_file and key_file are required when enabled`);
    if (!/^.+:\d+$/.test(c.http.address)) errors.push(`${where}: http.address: expected host:port, got ${JSON.stringify(c.http.address)}`);
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
