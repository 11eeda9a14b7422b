/** Plain HTTP requests for tests that need exact control of headers and bodies. */
import * as http from 'node:http';
import * as https from 'node:https';
import { type LookupFunction } from 'node:net';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Resolves every name to 127.0.0.1, so virtual-hosted names work without DNS. */
export const loopbackLookup: LookupFunction = (_host, options, cb) => {
  if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
};

export function request(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: Buffer | string; host?: string; ca?: Buffer; expectContinue?: boolean } = {},
): Promise<Reply> {
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.host) headers.host = o.host;
    if (o.body !== undefined) headers['content-length'] = String(Buffer.byteLength(o.body));
    const req = lib.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method: o.method ?? 'GET', headers, agent: false, ...(o.ca ? { ca: o.ca } : {}) },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (o.body === undefined) req.end();
    else if (o.expectContinue) req.on('continue', () => req.end(o.body));
    else req.end(o.body);
  });
}
