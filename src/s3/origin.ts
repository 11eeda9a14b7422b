/**
 * The origin client: one keep-alive agent, every request re-signed with the endpoint's own
 * credentials (UNSIGNED-PAYLOAD), bodies streamed. Names under `.localhost` resolve to
 * loopback (RFC 6761), so a virtual-hosted origin on this machine needs no DNS.
 */
import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { type LookupFunction } from 'node:net';
import { type Readable } from 'node:stream';
import { type Target, originLocation } from './addressing';
import { type CacheConfig } from './config';
import { type CredentialSource } from './credentials';
import { SigningKeyCache, canonicalQuery, signOutgoing } from './sigv4';

export interface OriginRequest {
  method: string;
  target: Target;
  query?: readonly (readonly [string, string])[];
  /** Lower-case names; hop-by-hop and client auth headers already removed. */
  headers?: Record<string, string>;
  /** A stream is piped (and its errors abort the origin request); a Buffer is written whole. */
  body?: Readable | Buffer | undefined;
}

const lookup: LookupFunction = (hostname, options, callback) => {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if ((options as dns.LookupOptions).all) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dns.lookup(hostname, options, callback);
};

export class Origin {
  readonly endpoint: URL;
  readonly #virtualHosted: boolean;
  readonly #region: string;
  readonly #creds: CredentialSource;
  readonly #keys = new SigningKeyCache(64);
  readonly #agent: http.Agent;
  readonly #timeoutMs: number;
  readonly #request: typeof http.request;

  constructor(o: CacheConfig['origin'], creds: CredentialSource) {
    this.endpoint = new URL(o.endpoint);
    this.#virtualHosted = o.virtual_hosted;
    this.#region = o.region;
    this.#creds = creds;
    this.#timeoutMs = o.timeout_ms;
    const tls = this.endpoint.protocol === 'https:';
    const common = { keepAlive: true, maxSockets: o.max_sockets, maxFreeSockets: o.max_sockets, lookup };
    this.#agent = tls ? new https.Agent({ ...common, ...(o.ca_file !== '' ? { ca: fs.readFileSync(o.ca_file) } : {}) }) : new http.Agent(common);
    this.#request = tls ? https.request : http.request;
  }

  /** Sends the request; resolves with the origin's response once its headers arrive. */
  async send(r: OriginRequest): Promise<http.IncomingMessage> {
    const creds = await this.#creds.get();
    const loc = originLocation(this.endpoint, this.#virtualHosted, r.target);
    const query = r.query ?? [];
    const headers = { ...(r.headers ?? {}) };
    signOutgoing({ method: r.method, host: loc.host, path: loc.path, query, headers }, creds, this.#region, this.#keys);
    const qs = canonicalQuery(query, false);
    const hostname = loc.host.replace(/:\d+$/, '');
    return new Promise((resolve, reject) => {
      const options: https.RequestOptions = {
        agent: this.#agent,
        host: hostname.replace(/^\[|\]$/g, ''),
        servername: hostname,
        port: this.endpoint.port || (this.endpoint.protocol === 'https:' ? 443 : 80),
        method: r.method,
        path: loc.path + (qs ? '?' + qs : ''),
        headers: { ...headers, host: loc.host },
      };
      const req = this.#request(options);
      const timer = setTimeout(() => req.destroy(new Error(`origin did not answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
      req.once('response', (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      const body = r.body;
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        // Not stream.pipeline: a failed body must destroy the request without ending it, so
        // the origin never sees a complete upload.
        if (body.errored) req.destroy(body.errored as Error);
        else {
          body.once('error', (err) => req.destroy(err));
          body.pipe(req);
        }
      }
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
