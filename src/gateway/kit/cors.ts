/**
 * CORS for the Svc and Durable Streams listeners (docs/protocol.md "Browsers (CORS)"), so that a web
 * page on another origin can append, read and tail (`EventSource`) a stream. One policy per
 * listener: the allowed origins come from `--cors-origins`, the methods and headers from the
 * listener's protocol.
 *
 *   engine ──▶ metered ──▶ withCors ──▶ shield ──▶ auth guard ──▶ handler
 *                             │ OPTIONS: answered here, before the guard (a preflight carries no
 *                             │          credentials; the spec exempts it from auth)
 *                             └ anything else: every response it leads to (replies, errors, the
 *                               guard's 401/403, the shield's 500, SSE heads) gets the headers
 *
 * - `*` (the default): `Access-Control-Allow-Origin: *`, one constant list of headers. Credentials
 *   are bearer tokens the page sets itself, never cookies, so `Access-Control-Allow-Credentials` is
 *   not sent.
 * - A list of origins: an allowed `Origin` is echoed with `Vary: Origin`; any other origin gets
 *   `Vary: Origin` and no allow header, so the browser withholds the answer from the page.
 * - `none`: no CORS headers at all; a preflight is answered without them, so browsers refuse.
 *
 * Which requests get them: on the Svc listener only those with an `Origin` (every CORS request a
 * browser sends has one), as S3 does, so server-side clients — the hot path — pay nothing, not even
 * the ~300 bytes of the expose list per answer. On the Durable Streams listener also every GET and
 * HEAD without `Origin`, as its reference server does, because a shared cache (a CDN in front of
 * catch-up reads) may keep such an answer and serve it to a page later (`CorsProtocol.readsWithoutOrigin`).
 * Its appends do not: a browser sends `Origin` with every request whose method is not GET or HEAD
 * (Fetch standard, "origin header"), and such answers are not cached, so the headers would only
 * cost an appending server-side client two more header writes per append.
 */
import { type BodyDone, type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, type ResponseBody } from '../http/engine';
import { ForwardingResponse } from '../http/forwarding-response';

/** What `--cors-origins` says: any origin, none, or these (lower-case `scheme://host[:port]`). */
export type CorsOrigins = '*' | readonly string[];

/** What a listener's protocol lets a page do: its methods, the request headers it reads and the response headers a page may see. */
export interface CorsProtocol {
  readonly methods: readonly string[];
  readonly requestHeaders: readonly string[];
  readonly exposedHeaders: readonly string[];
  /** Headers every preflight answer carries besides CORS (the Durable Streams listener's browser security headers). */
  readonly preflightExtra?: HeaderList;
  /**
   * Add the headers to answers to GET and HEAD requests without `Origin` too, which a shared cache
   * may serve to a page later (default: only to requests with one; other methods from a browser always carry one).
   */
  readonly readsWithoutOrigin?: boolean;
}

const NONE: HeaderList = [];

/** How long a browser may cache a preflight answer (s). */
export const CORS_MAX_AGE_S = 86_400; // 24 h

/** `*`, `none`, or a comma-separated list of origins → the policy's origins (an invalid entry throws). */
export function parseCorsOrigins(text: string): CorsOrigins {
  const t = text.trim();
  if (t === '*') return '*';
  if (t.toLowerCase() === 'none' || t === '') return [];
  return t.split(',').map((o) => {
    const v = o.trim().toLowerCase().replace(/\/$/, '');
    if (!ORIGIN_RE.test(v)) throw new Error(`${o.trim()} is not an origin (scheme://host[:port])`);
    return v;
  });
}

/** An origin as browsers send it: scheme, host, optional port; no path. */
const ORIGIN_RE = /^[a-z][a-z0-9+.-]*:\/\/(\[[0-9a-f:.]+\]|[a-z0-9._~%-]+)(:\d{1,5})?$/;

export class CorsPolicy {
  readonly #any: boolean;
  readonly #readsWithoutOrigin: boolean;
  readonly #origins: ReadonlySet<string>;
  readonly #allow: string;
  /** Responses when any origin is allowed, or for an origin that is not. */
  readonly #fixed: HeaderList;
  readonly #preflightFixed: HeaderList;
  readonly #preflightTail: HeaderList;
  readonly #expose: string;
  /** Per allowed origin, its headers (the list is bounded by the configuration). */
  readonly #byOrigin = new Map<string, { response: HeaderList; preflight: HeaderList }>();

  constructor(origins: CorsOrigins, p: CorsProtocol) {
    this.#any = origins === '*';
    this.#readsWithoutOrigin = p.readsWithoutOrigin ?? false;
    this.#origins = new Set(origins === '*' ? [] : origins);
    this.#allow = p.methods.join(', ');
    this.#expose = p.exposedHeaders.join(', ');
    this.#preflightTail = [
      ['access-control-allow-methods', this.#allow],
      ['access-control-allow-headers', p.requestHeaders.join(', ')],
      ['access-control-max-age', String(CORS_MAX_AGE_S)],
    ];
    const extra = p.preflightExtra ?? [];
    if (this.#any) {
      this.#fixed = [['access-control-allow-origin', '*'], ['access-control-expose-headers', this.#expose]];
      this.#preflightFixed = [...this.#fixed, ...extra, ...this.#preflightTail, ['allow', this.#allow]];
    } else {
      // A list varies by Origin; `none` allows nothing and so varies by nothing.
      this.#fixed = this.#origins.size > 0 ? [['vary', 'origin']] : [];
      this.#preflightFixed = [...this.#fixed, ...extra, ['allow', this.#allow]];
    }
  }

  /** Headers for the answer to a request with this `Origin` and method (empty: nothing to add). */
  responseHeaders(origin: string | undefined, method: string): HeaderList {
    if (origin === undefined && !(this.#readsWithoutOrigin && (method === 'GET' || method === 'HEAD'))) return NONE;
    return this.#allowed(origin)?.response ?? this.#fixed;
  }

  /** The answer to an OPTIONS request (a preflight, or a plain OPTIONS): 204, `Allow`, and CORS when the origin is allowed. */
  preflightHeaders(origin: string | undefined): HeaderList {
    return this.#allowed(origin)?.preflight ?? this.#preflightFixed;
  }

  #allowed(origin: string | undefined): { response: HeaderList; preflight: HeaderList } | undefined {
    if (this.#any || origin === undefined || this.#origins.size === 0) return undefined;
    let hit = this.#byOrigin.get(origin);
    if (hit === undefined) {
      if (!this.#origins.has(origin.toLowerCase())) return undefined;
      const response: HeaderList = [['access-control-allow-origin', origin], ['vary', 'origin'], ['access-control-expose-headers', this.#expose]];
      hit = { response, preflight: [...response, ...this.#preflightTail, ['allow', this.#allow]] };
      this.#byOrigin.set(origin, hit);
    }
    return hit;
  }
}

/**
 * The CORS layer around a listener's handler (outside the shield and the guard, so their answers
 * get the headers too). OPTIONS never reaches the handler.
 */
export function withCors(policy: CorsPolicy, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    const origin = req.headers['origin'];
    if (req.method === 'OPTIONS') {
      res.send(204, policy.preflightHeaders(origin));
      return undefined;
    }
    const extra = policy.responseHeaders(origin, req.method);
    return handler(req, extra.length === 0 ? res : new CorsResponse(res, extra));
  };
}

/** A response that adds the CORS headers to its status line, whichever way it is written. */
class CorsResponse extends ForwardingResponse {
  readonly #extra: HeaderList;

  constructor(res: HttpResponse, extra: HeaderList) {
    super(res);
    this.#extra = extra;
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    this.inner.send(status, headers.concat(this.#extra), body, done);
  }

  writeHead(status: number, headers: HeaderList): void {
    this.inner.writeHead(status, headers.concat(this.#extra));
  }
}
