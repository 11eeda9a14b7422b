/**
 * The S3 store's transport: node:http(s) with one keep-alive agent, each request signed with the
 * project's SigV4 signer (src/s3/sigv4, the one svc-cache signs toward its origin with;
 * UNSIGNED-PAYLOAD, which S3 accepts over TLS and any S3-compatible store over plain HTTP) and
 * answered whole (object bodies here are group-sized, read into one Buffer).
 * The same shape as svc-cache's origin client (src/s3/origin.ts), which is bound to svc-cache's
 * config and streams bodies, so only the signer is shared.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { type Credentials, SigningKeyCache, canonicalQuery, signOutgoing, uriEncode } from '../s3/sigv4';
import { type S3Location } from './objects-url';

export interface S3Request {
  method: 'GET' | 'PUT' | 'DELETE' | 'HEAD';
  /** The object's full key (store prefix included), or null for a bucket-level request (ListObjectsV2). */
  key: string | null;
  query?: readonly (readonly [string, string])[];
  /** Lower-case names. */
  headers?: Record<string, string>;
  body?: readonly Buffer[];
}

export interface S3Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export class S3Http {
  readonly #loc: S3Location;
  readonly #creds: Credentials;
  readonly #keys = new SigningKeyCache(16);
  readonly #agent: http.Agent;
  readonly #request: typeof http.request;
  readonly #timeoutMs: number;
  #closed = false;

  constructor(loc: S3Location, creds: Credentials, o: { timeoutMs: number; maxSockets: number }) {
    this.#loc = loc;
    this.#creds = creds;
    this.#timeoutMs = o.timeoutMs;
    const tls = loc.endpoint.protocol === 'https:';
    const common = { keepAlive: true, maxSockets: o.maxSockets, maxFreeSockets: o.maxSockets };
    this.#agent = tls ? new https.Agent(common) : new http.Agent(common);
    this.#request = tls ? https.request : http.request;
    // A socket whose answer ended just before close() comes back to the pool after it: end it then.
    this.#agent.on('free', (socket: { destroy(): void }) => {
      if (this.#closed) socket.destroy();
    });
  }

  /** Sends one request; rejects only when no complete answer came (refused, reset, timed out, malformed). */
  send(r: S3Request): Promise<S3Response> {
    const { host, path } = this.#location(r.key);
    const query = r.query ?? [];
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    let length = 0;
    for (const c of r.body ?? []) length += c.length;
    if (r.method === 'PUT') headers['content-length'] = String(length);
    signOutgoing({ method: r.method, host, path, query, headers }, this.#creds, this.#loc.region, this.#keys);
    const qs = canonicalQuery(query, false);
    const endpoint = this.#loc.endpoint;
    return new Promise<S3Response>((resolve, reject) => {
      const options: https.RequestOptions = {
        agent: this.#agent,
        host: endpoint.hostname.replace(/^\[|\]$/g, ''),
        servername: host.replace(/:\d+$/, ''),
        port: endpoint.port || (endpoint.protocol === 'https:' ? 443 : 80),
        method: r.method,
        path: path + (qs ? '?' + qs : ''),
        headers: { ...headers, host },
      };
      const req = this.#request(options);
      const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${this.#timeoutMs} ms`), { code: 'ETIMEDOUT' })), this.#timeoutMs);
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      req.on('error', fail);
      req.once('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('aborted', () => fail(Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' })));
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        });
      });
      for (const c of r.body ?? []) req.write(c);
      req.end();
    });
  }

  close(): void {
    this.#closed = true;
    this.#agent.destroy();
  }

  /** Host header and encoded path of a key (path style: /bucket/key; virtual-hosted: bucket.host/key). */
  #location(key: string | null): { host: string; path: string } {
    const e = this.#loc.endpoint;
    const base = e.pathname.replace(/\/+$/, '');
    const k = key === null ? '' : uriEncode(key, true);
    if (this.#loc.style === 'virtual') return { host: `${this.#loc.bucket}.${e.host}`, path: `${base}/${k}` };
    return { host: e.host, path: `${base}/${uriEncode(this.#loc.bucket, false)}${key === null ? '' : '/' + k}` };
  }
}
