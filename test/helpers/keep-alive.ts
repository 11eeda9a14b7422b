/**
 * Requests on chosen keep-alive connections: an `http.Agent` with one socket is one connection,
 * so a test that opens many of them can have the kernel spread them over a listener's threads
 * (`--gateway-threads`, `SO_REUSEPORT`) and then speak through each one it wants.
 */
import * as http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** `n` agents of one keep-alive socket each. */
export function connections(n: number): http.Agent[] {
  return Array.from({ length: n }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
}

/** One request on `agent`'s connection; the body as UTF-8 text. */
export function requestOn(agent: http.Agent, url: string, method: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
