/**
 * Requests to the node. Every request goes through `send`, which follows `307`/`308`
 * answers itself (at most `maxRedirects` hops) and puts `Authorization: Bearer` on every
 * hop, each time on the request to the hop's own target — the spec's "Client behaviour":
 * clients follow 307 themselves and re-send the credential on every hop. fetch's own
 * redirect handling is off (`redirect: 'manual'`), because it would drop the header on a
 * hop to another origin. A redirect from https to http is refused while a token is sent,
 * so the token never travels in clear text because a node said so.
 */
import { CliError, EXIT, serverError } from './errors';
import { type Context } from './context';

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  signal?: AbortSignal;
  /** Answers with these statuses are returned instead of thrown (e.g. 404 for `head`). */
  allow?: readonly number[];
}

export type Listener = 'protocol' | 'admin';

/** Percent-encodes a stream name segment by segment; a name without a leading slash gets one. */
export function streamPath(name: string): string {
  const full = name.startsWith('/') ? name : `/${name}`;
  return full.split('/').map(encodeURIComponent).join('/');
}

export function baseOf(ctx: Context, listener: Listener): string {
  return listener === 'admin' ? ctx.adminUrl : ctx.url;
}

/** Sends a request to `path` on the listener and returns the final answer (2xx or allowed). */
export async function send(ctx: Context, listener: Listener, path: string, o: SendOptions = {}): Promise<Response> {
  const method = o.method ?? 'GET';
  let url = new URL(baseOf(ctx, listener) + path);
  const token = ctx.token();
  for (let hop = 0; ; hop++) {
    const headers: Record<string, string> = { ...o.headers };
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: o.body, redirect: 'manual', signal: o.signal });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const code = cause?.code ?? cause?.message ?? String(err);
      const what = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code) ? 'cannot reach the node' : 'the connection failed before an answer';
      throw new CliError(`${method} ${url.origin}${url.pathname}: ${what} (${code})`, EXIT.failure);
    }
    if (res.status === 307 || res.status === 308) {
      const location = res.headers.get('location');
      await res.body?.cancel();
      // These carry the status the node answered, so they are not taken for a lost answer and
      // retried (`append` resends a batch only when no answer came).
      if (location === null) throw new CliError(`${method} ${url.pathname}: ${res.status} without a Location header`, EXIT.failure, res.status);
      if (hop >= ctx.maxRedirects) throw new CliError(`${method} ${path}: more than ${ctx.maxRedirects} redirects (last to ${location})`, EXIT.failure, res.status);
      const next = new URL(location, url);
      if (token !== null && url.protocol === 'https:' && next.protocol !== 'https:') {
        throw new CliError(`${method} ${path}: refusing to follow a redirect from https to ${next.protocol} with a token`, EXIT.failure, res.status);
      }
      url = next;
      continue;
    }
    if (res.ok || o.allow?.includes(res.status)) return res;
    const text = method === 'HEAD' ? '' : await res.text();
    const err = serverError(res.status, text, `${method} ${decodeURIComponent(url.pathname)}`);
    if (res.status === 401 && token === null) err.message += ' (no token: run `svc login`, or pass --token / SVC_TOKEN)';
    throw err;
  }
}

/** Sends and parses a JSON answer. */
export async function sendJson<T>(ctx: Context, listener: Listener, path: string, o: SendOptions = {}): Promise<T> {
  const res = await send(ctx, listener, path, o);
  const text = await res.text();
  return (text === '' ? null : JSON.parse(text)) as T;
}

/** A JSON request body with its content type. */
export function jsonBody(value: unknown, type = 'application/json'): Pick<SendOptions, 'headers' | 'body'> {
  return { headers: { 'content-type': type }, body: JSON.stringify(value) };
}
