/**
 * Environment overrides (spec "Configuration" and "Connector definition"):
 * - `SVC_CONNECTORS_<SECTION>__<KEY>[__<KEY>…]` sets a config.toml key (`[state.http] url` is
 *   `SVC_CONNECTORS_STATE__HTTP__URL`);
 * - `SVC_CONNECTORS_SINK_<KEY>_<FIELD>` / `SVC_CONNECTORS_SOURCE_<KEY>_<FIELD>` a definition's
 *   top-level field, and `…_PLUGIN_CONFIG_<FIELD>` a plugin_config field (`__` nests further).
 * Values that look like JSON are parsed as JSON (true, numbers, arrays, objects); anything else
 * is a string. Names are matched case-insensitively and stored lower case.
 */
export const PREFIX = 'SVC_CONNECTORS_';
/** Variables with the prefix that are not config keys. */
const RESERVED = new Set(['SVC_CONNECTORS_CONFIG_PATH', 'SVC_CONNECTORS_LOG']);

export function parseEnvValue(raw: string): unknown {
  const t = raw.trim();
  if (/^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?|\[.*\]|\{.*\}|".*")$/s.test(t)) {
    try {
      return JSON.parse(t);
    } catch {
      return raw;
    }
  }
  return raw;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let at = target;
  for (const p of path.slice(0, -1)) {
    const next = at[p];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
}

/** True for a `SVC_CONNECTORS_` variable that is not a config.toml key: reserved names and per-connector overrides. */
export function notConfigEnv(name: string): boolean {
  const rest = name.slice(PREFIX.length);
  return RESERVED.has(name) || rest.startsWith('SINK_') || rest.startsWith('SOURCE_');
}

/** Applies `SVC_CONNECTORS_<A>__<B>` variables to the raw config table; returns the names it used. */
export function applyConfigEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  const used: string[] = [];
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (value === undefined || !name.startsWith(PREFIX) || notConfigEnv(name)) continue;
    const rest = name.slice(PREFIX.length);
    if (!rest.includes('__')) continue;
    setPath(raw, rest.toLowerCase().split('__'), parseEnvValue(value));
    used.push(name);
  }
  return used;
}

/** `<KEY>` of a connector key: upper case, non-alphanumerics as underscores. */
export const envKey = (key: string): string => key.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** Applies `SVC_CONNECTORS_SINK_<KEY>_…` (or SOURCE) to one raw definition; returns the names used. */
export function applyConnectorEnv(def: Record<string, unknown>, type: 'sink' | 'source', key: string, env: NodeJS.ProcessEnv, allKeys: string[] = [key]): string[] {
  const prefixOf = (k: string): string => `${PREFIX}${type.toUpperCase()}_${envKey(k)}_`;
  const prefix = prefixOf(key);
  // Key `a` must not take the variables of key `a_b` (SVC_CONNECTORS_SINK_A_B_…).
  const longer = allKeys.map(prefixOf).filter((p) => p.length > prefix.length && p.startsWith(prefix));
  const used: string[] = [];
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (value === undefined || !name.startsWith(prefix) || longer.some((p) => name.startsWith(p))) continue;
    const field = name.slice(prefix.length);
    if (field === '') continue;
    const parsed = parseEnvValue(value);
    if (field.startsWith('PLUGIN_CONFIG_')) {
      const sub = field.slice('PLUGIN_CONFIG_'.length).toLowerCase().split('__');
      const pc = (def.plugin_config !== null && typeof def.plugin_config === 'object' ? def.plugin_config : (def.plugin_config = {})) as Record<string, unknown>;
      setPath(pc, sub, parsed);
    } else setPath(def, field.toLowerCase().split('__'), parsed);
    used.push(name);
  }
  return used;
}
