/**
 * Token scopes (spec "Scope (token permissions)"): which streams and token ids, which groups and
 * operations, which audiences (listeners), until when. A missing key denies; unknown keys are
 * refused. The mapping of every endpoint to its operation and group: docs/auth.md.
 */

export const OPS = [
  'read',
  'head',
  'list',
  'create',
  'append',
  'trim',
  'close',
  'delete',
  'issue_token',
  'revoke_token',
  'list_tokens',
  'cluster_read',
  'node_read',
  'stream_inspect',
  'transfer_stream',
  'update_node_slots',
  // The schema registry listener (docs/schema-registry.md): read subjects, schemas and settings;
  // register versions; delete them; change compatibility levels and modes.
  'schema_read',
  'schema_write',
  'schema_delete',
  'schema_config',
] as const;
export type Op = (typeof OPS)[number];

export const AUDIENCES = ['svc', 'durable_streams', 'admin', 'schema_registry'] as const;
export type Audience = (typeof AUDIENCES)[number];

export const GROUPS = ['stream', 'tokens', 'admin', 'schemas'] as const;
export type Group = (typeof GROUPS)[number];

export type Matcher = { exact: string } | { prefix: string };

export interface Scope {
  streams?: Matcher[];
  tokens?: Matcher[];
  groups?: Partial<Record<Group, { read: boolean; write: boolean }>>;
  ops?: Op[];
  audiences?: Audience[];
  autoPrefixStreams?: boolean;
  expiresAtMs?: number | null;
}

/** The bootstrap token's scope: every stream, every token, every operation, every audience, no expiry. */
export const ROOT_SCOPE: Scope = {
  streams: [{ prefix: '' }],
  tokens: [{ prefix: '' }],
  groups: { stream: { read: true, write: true }, tokens: { read: true, write: true }, admin: { read: true, write: true }, schemas: { read: true, write: true } },
  ops: [...OPS],
  audiences: [...AUDIENCES],
  autoPrefixStreams: false,
  expiresAtMs: null,
};

const SCOPE_KEYS = new Set(['streams', 'tokens', 'groups', 'ops', 'audiences', 'autoPrefixStreams', 'expiresAtMs']);

/** Check a scope document; returns the problems found (empty when it is valid). */
export function scopeErrors(v: unknown): string[] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['scope must be an object'];
  const errors: string[] = [];
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!SCOPE_KEYS.has(k)) errors.push(`scope.${k}: unknown key`);
  for (const k of ['streams', 'tokens'] as const) {
    if (!(k in o)) continue;
    const m = o[k];
    if (!Array.isArray(m)) errors.push(`scope.${k}: must be an array of {exact} or {prefix} matchers`);
    else m.forEach((x, i) => errors.push(...matcherErrors(x, `scope.${k}[${i}]`)));
  }
  if ('groups' in o) {
    const g = o['groups'];
    if (typeof g !== 'object' || g === null || Array.isArray(g)) errors.push('scope.groups: must be an object');
    else {
      for (const [name, rw] of Object.entries(g)) {
        if (!(GROUPS as readonly string[]).includes(name)) errors.push(`scope.groups.${name}: unknown group (stream, tokens, admin, schemas)`);
        else if (typeof rw !== 'object' || rw === null || Array.isArray(rw) || Object.keys(rw).some((k) => k !== 'read' && k !== 'write') || typeof (rw as { read?: unknown }).read !== 'boolean' || typeof (rw as { write?: unknown }).write !== 'boolean') {
          errors.push(`scope.groups.${name}: must be {read: boolean, write: boolean}`);
        }
      }
    }
  }
  errors.push(...listErrors(o, 'ops', OPS), ...listErrors(o, 'audiences', AUDIENCES));
  if ('autoPrefixStreams' in o && typeof o['autoPrefixStreams'] !== 'boolean') errors.push('scope.autoPrefixStreams: must be a boolean');
  if ('expiresAtMs' in o && o['expiresAtMs'] !== null && !(Number.isSafeInteger(o['expiresAtMs']) && (o['expiresAtMs'] as number) >= 0)) {
    errors.push('scope.expiresAtMs: must be unix milliseconds or null');
  }
  if (o['autoPrefixStreams'] === true) {
    const prefixes = Array.isArray(o['streams']) ? (o['streams'] as Matcher[]).filter((m) => typeof m === 'object' && m !== null && 'prefix' in m) : [];
    if (prefixes.length !== 1 || (o['streams'] as unknown[]).length !== 1) errors.push('scope.autoPrefixStreams: needs exactly one streams matcher, a {prefix} (the tenant prefix)');
    else if (!/^\/([A-Za-z0-9._~-]+\/)+$/.test((prefixes[0] as { prefix: string }).prefix)) {
      errors.push('scope.streams[0].prefix: a tenant prefix is one or more path segments of A-Z a-z 0-9 . _ ~ - between slashes (e.g. "/tenant-a/")');
    }
  }
  return errors;
}

function matcherErrors(x: unknown, where: string): string[] {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return [`${where}: must be {exact: string} or {prefix: string}`];
  const keys = Object.keys(x);
  if (keys.length !== 1 || (keys[0] !== 'exact' && keys[0] !== 'prefix') || typeof (x as Record<string, unknown>)[keys[0]] !== 'string') {
    return [`${where}: must be {exact: string} or {prefix: string}`];
  }
  return [];
}

function listErrors(o: Record<string, unknown>, key: string, allowed: readonly string[]): string[] {
  if (!(key in o)) return [];
  const v = o[key];
  if (!Array.isArray(v)) return [`scope.${key}: must be an array`];
  return v.flatMap((x, i) => (typeof x === 'string' && allowed.includes(x) ? [] : [`scope.${key}[${i}]: must be one of ${allowed.join(', ')}`]));
}
