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
