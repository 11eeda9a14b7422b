/**
 * What a scope allows, and whether one scope is within another (a token is issued only with a
 * scope no wider than its issuer's).
 */
import { type Audience, type Group, type Matcher, type Op, type Scope } from './scope';

/** One request as the scope sees it (built per endpoint: docs/auth.md). */
export interface Access {
  audience: Audience;
  op: Op;
  group: Group;
  /** Read or write side of the group. */
  write: boolean;
  /** The stream (`streams` matchers) or token id (`tokens` matchers) it touches, if any. */
  stream?: string;
  token?: string;
  /** `stream` is a name prefix (a list): only a prefix matcher that covers the whole range allows it. */
  range?: boolean;
}

export function matches(ms: readonly Matcher[] | undefined, name: string): boolean {
  return (ms ?? []).some((m) => ('exact' in m ? m.exact === name : name.startsWith(m.prefix)));
}

export function expired(scope: Scope, now: number): boolean {
  return scope.expiresAtMs != null && scope.expiresAtMs <= now;
}

/** Null when allowed; otherwise why not (for the 403 message). */
export function denial(scope: Scope, a: Access): string | null {
  if (!(scope.audiences ?? []).includes(a.audience)) return `the token is not valid on the ${a.audience} audience`;
  if (!(scope.ops ?? []).includes(a.op)) return `the token does not allow ${a.op}`;
  const g = scope.groups?.[a.group];
  if (g === undefined || !(a.write ? g.write : g.read)) return `the token does not allow ${a.write ? 'writing' : 'reading'} ${a.group}`;
  if (a.stream !== undefined && a.range === true && !(scope.streams ?? []).some((m) => 'prefix' in m && a.stream!.startsWith(m.prefix))) {
    return `the token does not cover every stream under ${a.stream}`;
  }
  if (a.stream !== undefined && a.range !== true && !matches(scope.streams, a.stream)) return `the token does not cover the stream ${a.stream}`;
  if (a.token !== undefined && !matches(scope.tokens, a.token)) return `the token does not cover the token ${a.token}`;
  return null;
}

/** A matcher is covered when everything it matches is matched by one of `by`. */
function covered(m: Matcher, by: readonly Matcher[]): boolean {
  return by.some((b) => ('exact' in b ? 'exact' in m && m.exact === b.exact : ('exact' in m ? m.exact : m.prefix).startsWith(b.prefix)));
}

/** Null when `child` is within `parent`; otherwise the first way it is wider. */
export function widening(child: Scope, parent: Scope): string | null {
  for (const op of child.ops ?? []) if (!(parent.ops ?? []).includes(op)) return `op ${op}`;
  for (const a of child.audiences ?? []) if (!(parent.audiences ?? []).includes(a)) return `audience ${a}`;
  for (const [name, rw] of Object.entries(child.groups ?? {}) as Array<[Group, { read: boolean; write: boolean }]>) {
    const p = parent.groups?.[name];
    if ((rw.read && p?.read !== true) || (rw.write && p?.write !== true)) return `group ${name}`;
  }
  for (const m of child.streams ?? []) if (!covered(m, parent.streams ?? [])) return `streams ${JSON.stringify(m)}`;
  for (const m of child.tokens ?? []) if (!covered(m, parent.tokens ?? [])) return `tokens ${JSON.stringify(m)}`;
  if (parent.expiresAtMs != null && (child.expiresAtMs == null || child.expiresAtMs > parent.expiresAtMs)) return 'expiresAtMs (later than the issuer\'s)';
  // A tenant-prefixed token only issues tenant-prefixed tokens.
  if (parent.autoPrefixStreams === true && child.autoPrefixStreams !== true) return 'autoPrefixStreams';
  return null;
}

/** The tenant prefix of an autoPrefixStreams scope (`/tenant-a/`), or null. */
export function tenantPrefix(scope: Scope): string | null {
  if (scope.autoPrefixStreams !== true) return null;
  const m = scope.streams?.[0];
  return m !== undefined && 'prefix' in m ? m.prefix : null;
}
