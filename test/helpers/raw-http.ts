/**
 * Raw HTTP/1.1 over a socket, for requests no client library would send (malformed heads,
 * smuggling attempts, fuzz): writes the bytes as given and reads back one response.
 */
import * as net from 'node:net';

export interface RawResponse {
  /** Status code of the first response, or null when none arrived. */
  status: number | null;
  /** Lower-case header name → value of the first response. */
  headers: Record<string, string>;
  body: Buffer;
  /** The server closed the connection (before `timeoutMs`). */
  closed: boolean;
  /** Everything received. */
  raw: Buffer;
}

/** Sends `bytes` to host:port and resolves once a whole response has arrived, the peer closed, or `timeoutMs` passed. */
export function rawRequest(port: number, bytes: Buffer | string, timeoutMs = 3000, host = '127.0.0.1'): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let raw = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(raw), closed, raw });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (d: Buffer) => {
      raw = Buffer.concat([raw, d]);
      const r = parseResponse(raw);
      if (r.complete) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

/** Like rawRequest, but waits for the peer to close (or the timeout) after a complete response. */
export function rawRequestUntilClose(port: number, bytes: Buffer | string, timeoutMs = 3000): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let raw = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponse(raw), closed, raw });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (d: Buffer) => (raw = Buffer.concat([raw, d])));
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

function parseResponse(raw: Buffer): { status: number | null; headers: Record<string, string>; body: Buffer; complete: boolean } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: null, headers: {}, body: Buffer.alloc(0), complete: false };
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const status = m === null ? null : Number(m[1]);
  const length = headers['content-length'] === undefined ? 0 : Number(headers['content-length']);
  const body = raw.subarray(end + 4, end + 4 + length);
  // Chunked bodies are not parsed: the tests here read status and head only.
  const complete = status !== null && (headers['transfer-encoding'] !== undefined || body.length >= length);
  return { status, headers, body, complete };
}
