/**
 * `[connectors] config_type = "http"`: definitions fetched from a service at startup (startup
 * step 3). GET <base_url><url_templates.list> (default `/connectors`) returns an array of
 * definitions (JSON, the same fields as the TOML files; `response.data_path` names where the
 * array is in the body). Versions posted through the API are kept in memory for this provider.
 */
import type { ConnectorsConfig } from './config-schema';
import { backoff, parseDuration, sleep } from './duration';
import { applyConnectorEnv } from './env-overrides';
import { type ConnectorVersions, DefinitionError, validateDefinition } from './definitions';

export async function fetchDefinitions(c: ConnectorsConfig['connectors']['http'], env: NodeJS.ProcessEnv): Promise<Map<string, ConnectorVersions>> {
  const url = c.base_url.replace(/\/$/, '') + (c.url_templates.list ?? '/connectors');
  let body: unknown;
  let last: unknown;
  for (let i = 0; i < c.retry.max_attempts; i++) {
    try {
      const r = await fetch(url, { headers: c.request_headers, signal: AbortSignal.timeout(parseDuration(c.timeout)!) });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      body = await r.json();
      break;
    } catch (err) {
      last = err;
      if (i + 1 < c.retry.max_attempts) await sleep(backoff(i, parseDuration(c.retry.initial_backoff)!, parseDuration(c.retry.max_backoff)!));
    }
  }
  if (body === undefined) throw new DefinitionError([`cannot fetch definitions from ${url}: ${(last as Error).message}`]);
  const list = c.response.data_path === '' ? body : c.response.data_path.split('.').reduce<unknown>((a, k) => (a as Record<string, unknown> | undefined)?.[k], body);
  if (!Array.isArray(list)) throw new DefinitionError([`${url}: expected an array of definitions${c.response.data_path === '' ? '' : ` at ${c.response.data_path}`}`]);
  const errors: string[] = [];
  const out = new Map<string, ConnectorVersions>();
  list.forEach((raw: Record<string, unknown>, i) => {
    const type = raw.type === 'source' ? 'source' : 'sink';
    if (typeof raw.key === 'string') applyConnectorEnv(raw, type, raw.key, env, list.map((x: Record<string, unknown>) => String(x.key)));
    const v = validateDefinition(raw, `${url} [${i}]`);
    if ('errors' in v) return void errors.push(...v.errors);
    const d = v.definition;
    const id = `${d.type}:${d.key}`;
    const e = out.get(id) ?? { type: d.type, key: d.key, original: '', versions: new Map(), active: d.version };
    e.versions.set(d.version, { version: d.version, definition: d, file: '', created: Date.now() });
    out.set(id, e);
  });
  if (errors.length > 0) throw new DefinitionError(errors);
  return out;
}

/** The API's create, activate and delete calls, forwarded to the HTTP provider. */
export type ForwardOp = { op: 'create'; type: string; key: string; definition: unknown } | { op: 'activate'; type: string; key: string; version: number } | { op: 'delete'; type: string; key: string; version: number };
export type Forwarder = (f: ForwardOp) => Promise<void>;

/** Default paths under base_url; `url_templates.create`, `.activate`, `.delete` replace them. */
const FORWARD: Record<ForwardOp['op'], { method: string; template: string }> = {
  create: { method: 'POST', template: '/connectors/{type}/{key}/configs' },
  activate: { method: 'PUT', template: '/connectors/{type}/{key}/configs/active' },
  delete: { method: 'DELETE', template: '/connectors/{type}/{key}/configs/{version}' },
};

export function httpForwarder(c: ConnectorsConfig['connectors']['http']): Forwarder {
  return async (f) => {
    const d = FORWARD[f.op];
    const path = (c.url_templates[f.op] ?? d.template).replace('{type}', encodeURIComponent(f.type)).replace('{key}', encodeURIComponent(f.key)).replace('{version}', 'version' in f ? String(f.version) : '');
    const body = f.op === 'create' ? JSON.stringify(f.definition) : f.op === 'activate' ? JSON.stringify({ version: f.version }) : undefined;
    const r = await fetch(c.base_url.replace(/\/$/, '') + path, { method: d.method, headers: { ...c.request_headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body, signal: AbortSignal.timeout(parseDuration(c.timeout)!) });
    await r.arrayBuffer();
    if (!r.ok) throw new Error(`${d.method} ${path}: HTTP ${r.status}`);
  };
}
