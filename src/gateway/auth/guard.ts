/**
 * `--auth required`: every request on a listener is authenticated (its bearer token, or the
 * `anonymous` token when it carries none) and authorized (access-map.ts) before its handler runs.
 * Denials take each listener's shape: JSON with `WWW-Authenticate: Bearer` on 401 on the Svc and
 * admin listeners; plain text with only the protocol's own headers on the Durable Streams
 * listener, so a scope 403 never looks like producer fencing (403 with Producer-Epoch).
 *
 *   request ──▶ plan (op, group, streams; tenant prefix) ──▶ authenticate ──▶ authorize ──▶ handler
 *                  │ open (probes, preflights, static assets) ─────────────────────────────▶ handler
 */
import { type AuthFailure, type Authenticator, type Principal, ROOT_SCOPE, denial, tenantPrefix } from '../../actors';
import { COMMON_HEADERS } from '../ds/ds-headers';
import { type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, wholeBody } from '../http/engine';
import { withSend } from '../http/forwarding-response';
import { type Listener, plan } from './access-map';

const PRINCIPALS = new WeakMap<HttpRequest, Principal>();
/** With auth off every request acts with the root scope. */
const NO_AUTH: Principal = { id: 'auth-off', scope: ROOT_SCOPE };

/** Who made this request (the root principal when auth is off). */
export function principalOf(req: HttpRequest): Principal {
  return PRINCIPALS.get(req) ?? NO_AUTH;
}

const WHY: Record<AuthFailure, string> = {
  absent: 'a bearer token is required (Authorization: Bearer <token>)',
  malformed: 'the Authorization header is not "Bearer <token>" with a token this service issues',
  unknown: 'the token is unknown or revoked',
  expired: 'the token has expired',
};

export function guard(listener: Listener, tokens: Authenticator, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    const first = plan(listener, req, null);
    if (first.open) return handler(req, res);
    // Returns the handler's own result, so the shield around the guard sees its failures too.
    const decide = (who: Principal | AuthFailure): void | Promise<unknown> => {
      if (typeof who === 'string') return deny(listener, res, req, 401, WHY[who]);
      const prefix = tenantPrefix(who.scope);
      const p = prefix === null ? first : plan(listener, req, prefix);
      for (const a of p.accesses) {
        const why = denial(who.scope, a);
        // No credential at all: the anonymous scope fell short, and a token might not (401, not 403).
        if (why !== null) return req.headers['authorization'] === undefined ? deny(listener, res, req, 401, WHY.absent) : deny(listener, res, req, 403, why);
      }
      PRINCIPALS.set(p.req, who);
      return handler(p.req, prefix === null ? res : unprefixing(res, req, p.req, prefix));
    };
    // Synchronously where the metadata view is known current (the local store): the handler then
    // runs in the same turn as without auth, and its storage calls batch the same way.
    // Schema Registry clients send `Basic base64(user:token)` (basic.auth.user.info): the password is the token.
    const authorization = listener === 'registry' ? basicAsBearer(req.headers['authorization']) : req.headers['authorization'];
    const now = tokens.authenticateNow(authorization);
    if (now !== null) return decide(now);
    // The view could not be brought up to date (no metadata quorum): the check cannot be trusted, and a
    // client should retry as for any unavailable storage (503), not take it for a bug (500).
    const failed = (err: unknown): void =>
      (err as { code?: unknown } | null)?.code === 'storage_unavailable'
        ? deny(listener, res, req, 503, 'the metadata store is unavailable, so the token cannot be checked; retry')
        : deny(listener, res, req, 500, 'internal error');
    return tokens.authenticate(authorization).then(decide, failed);
  };
}

/** `Basic base64(user:password)` → `Bearer password`; anything else unchanged. */
function basicAsBearer(authorization: string | undefined): string | undefined {
  const m = authorization === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization.trim());
  if (m === null) return authorization;
  const pair = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  return colon < 0 ? authorization : `Bearer ${pair.slice(colon + 1)}`;
}

function deny(listener: Listener, res: HttpResponse, req: HttpRequest, status: number, message: string): void {
  if (res.aborted) return;
  const error = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status === 503 ? 'storage_unavailable' : 'internal';
  let headers: HeaderList;
  let body: string;
  if (listener === 'ds') {
    headers = [...COMMON_HEADERS, ['content-type', 'text/plain; charset=utf-8']];
    body = message;
  } else if (listener === 'registry') {
    // Confluent's error body, which its clients parse; they send Basic credentials.
    headers = status === 401 ? [['content-type', 'application/vnd.schemaregistry.v1+json'], ['www-authenticate', 'Basic realm="schema-registry"']] : [['content-type', 'application/vnd.schemaregistry.v1+json']];
    body = JSON.stringify({ error_code: status === 401 ? 40101 : status === 403 ? 40301 : 50001, message });
  } else {
    headers = status === 401 ? [['content-type', 'application/json'], ['www-authenticate', 'Bearer']] : [['content-type', 'application/json']];
    // The admin error body has only `error` (spec "Error body").
    body = JSON.stringify(listener === 'admin' ? { error } : { error, message });
  }
  // Retriable: the metadata store is back within seconds (docs/cluster.md, "When etcd loses its quorum").
  if (status === 503) headers = [...headers, ['retry-after', '1']];
  res.send(status, headers, req.method === 'HEAD' ? undefined : body);
}

/**
 * A tenant token's responses speak the tenant's names: the prefix the request gained comes off
 * again in `Location` and in the names of a stream list.
 */
function unprefixing(res: HttpResponse, original: HttpRequest, rewritten: HttpRequest, prefix: string): HttpResponse {
  const strip = (name: string): string => (name.startsWith(prefix) ? '/' + name.slice(prefix.length) : name);
  const isList = rewritten.path === '/' && rewritten.method === 'GET';
  return withSend(res, (target, status, headers, body, done) => {
    const mapped = headers.map(([k, v]): readonly [string, string] => (k.toLowerCase() === 'location' ? [k, v.replace(rewritten.path, original.path)] : [k, v]));
    let out = body;
    if (isList && status === 200 && body !== undefined) {
      const whole = wholeBody(body);
      const doc = JSON.parse(typeof whole === 'string' ? whole : Buffer.from(whole).toString('utf8')) as { streams: Array<{ name: string }> };
      for (const s of doc.streams) s.name = strip(s.name);
      out = JSON.stringify(doc);
    }
    // A body replaced here is never sent: the original one is free at once.
    if (out !== body) done?.();
    target.send(status, mapped, out, out === body ? done : undefined);
  });
}
