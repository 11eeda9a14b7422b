/**
 * The `__ds` routes, parsed from the raw subpath after `/v1/stream/__ds/`:
 *
 *   jwks.json                                    GET     the webhook signing keys
 *   subscriptions/<id>                           PUT     create (201) or confirm (200)
 *                                                GET     describe, DELETE remove (204)
 *   subscriptions/<id>/streams                   POST    link explicit streams (204)
 *   subscriptions/<id>/streams/<encoded path>    DELETE  unlink an explicit stream (204)
 *   subscriptions/<id>/callback                  POST    webhook consumer: ack, heartbeat, done
 *   subscriptions/<id>/claim | ack | release     POST    pull-wake worker
 */
import { normalizePath } from './definition';

export type Action = 'callback' | 'claim' | 'ack' | 'release';

export type Route =
  | { kind: 'jwks' }
  | { kind: 'subscription'; id: string }
  | { kind: 'streams'; id: string }
  | { kind: 'stream'; id: string; path: string }
  | { kind: 'action'; id: string; action: Action }
  | { kind: 'invalid'; message: string }
  | { kind: 'unknown' };

const ACTIONS: readonly string[] = ['callback', 'claim', 'ack', 'release'];

/** Subscription ids: 1 to 256 characters, no control characters (they travel in URLs and logs). */
const ID_RE = /^[^\p{Cc}]{1,256}$/u;

export function parseRoute(subpath: string): Route {
  const path = subpath.split('?', 1)[0]!;
  if (path === 'jwks.json') return { kind: 'jwks' };
  const parts = path.split('/');
  if (parts[0] !== 'subscriptions' || parts.length < 2) return { kind: 'unknown' };
  let decoded: string[];
  try {
    decoded = parts.slice(1).map((p) => decodeURIComponent(p));
  } catch {
    return { kind: 'invalid', message: 'malformed percent-encoding in the path' };
  }
  const [id = '', ...rest] = decoded;
  if (id === '') return { kind: 'unknown' };
  if (!ID_RE.test(id)) return { kind: 'invalid', message: 'a subscription id is 1 to 256 characters without control characters' };
  if (rest.length === 0) return { kind: 'subscription', id };
  if (rest[0] === 'streams') {
    if (rest.length === 1) return { kind: 'streams', id };
    const stream = normalizePath(rest.slice(1).join('/'));
    return stream === '' ? { kind: 'unknown' } : { kind: 'stream', id, path: stream };
  }
  if (rest.length === 1 && ACTIONS.includes(rest[0]!)) return { kind: 'action', id, action: rest[0] as Action };
  return { kind: 'unknown' };
}
