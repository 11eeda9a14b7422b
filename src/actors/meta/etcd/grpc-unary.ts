/**
 * A unary gRPC call over node:http2, for the one call on the write path of objects mode (etcd's
 * KV/Txn, sent by etcd-link.ts). grpc-js, under the `etcd3` client, costs about twice the CPU
 * and adds about 0.4 ms per call on this path (docs/cluster.md, "What an objects-mode append
 * costs"): its channel, filters and call objects are built for every feature gRPC has. A unary
 * call over HTTP/2 is small (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md):
 *
 *   request   HEADERS :method POST, :path /<service>/<method>, content-type application/grpc,
 *                     te trailers, grpc-timeout <n>m
 *             DATA    0x00 (not compressed), u32 BE length, the message          (END_STREAM)
 *   response  HEADERS :status 200 (a "Trailers-Only" answer carries grpc-status here, no body)
 *             DATA    0x00, u32 BE length, the message
 *             HEADERS grpc-status, grpc-message (percent-encoded)                (END_STREAM)
 *
 * One HTTP/2 session per member, opened on first use and again after it breaks. A call that
 * passes its deadline is cancelled and the session pinged: a session whose ping goes unanswered
 * within the deadline is destroyed, so a peer that vanished without a FIN (no keepalive here
 * otherwise) costs one deadline, not every call after it. Plaintext for `--metadata etcd://`, TLS
 * (a CA, a client certificate) for `etcds://`; a call may carry extra headers (etcd's auth `token`).
 */
import * as http2 from 'node:http2';
import { isIP } from 'node:net';

/** The call reached the server and it answered with a gRPC status other than OK. */
export class GrpcStatusError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(`grpc status ${code}: ${message}`);
    this.name = 'GrpcStatusError';
    this.code = code;
  }
}

/** The largest answer taken (etcd's own default send limit is 2 GiB; a txn answer is small). */
const MAX_ANSWER_BYTES = 64 << 20;

function grpcMessage(raw: string | string[] | undefined): string {
  const s = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** TLS of a channel: the CA bundle to verify the member with (absent: the system's) and a client certificate. */
export interface GrpcTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export class GrpcUnaryChannel {
  readonly #origin: string;
  readonly #connect: http2.SecureClientSessionOptions;
  #session: http2.ClientHttp2Session | null = null;
  #closed = false;

  /** `endpoint`: host:port (IPv6 hosts in brackets); `tls`: null for plaintext. */
  constructor(endpoint: string, tls: GrpcTls | null = null) {
    this.#origin = `${tls === null ? 'http' : 'https'}://${endpoint}`;
    const host = endpoint.slice(0, endpoint.lastIndexOf(':')).replace(/^\[|\]$/g, '');
    // SNI names a host, never an address (RFC 6066); the certificate is still checked against the address.
    this.#connect = tls === null ? {} : { ALPNProtocols: ['h2'], servername: isIP(host) === 0 ? host : '', ...(tls.ca !== undefined ? { ca: tls.ca } : {}), ...(tls.cert !== undefined ? { cert: tls.cert } : {}), ...(tls.key !== undefined ? { key: tls.key } : {}) };
  }

  #open(): http2.ClientHttp2Session {
    const live = this.#session;
    if (live !== null && !live.closed && !live.destroyed) return live;
    const s = http2.connect(this.#origin, this.#connect);
    // Errors reach each stream on the session too: the calls fail one by one, and the next call
    // opens a new session.
    s.on('error', () => this.#drop(s));
    s.on('goaway', () => this.#drop(s));
    s.on('close', () => this.#drop(s));
    // Like grpc-js channels: an idle session does not keep the process alive (a call's deadline timer does).
    s.unref();
    this.#session = s;
    return s;
  }

  #drop(s: http2.ClientHttp2Session): void {
    if (this.#session === s) this.#session = null;
  }

  /** A call past its deadline: is the session itself dead? Destroy it if its ping is not answered in `ms`. */
  #probe(s: http2.ClientHttp2Session, ms: number): void {
    if (s.destroyed || s.closed) return;
    const timer = setTimeout(() => s.destroy(), ms);
    timer.unref();
    const sent = s.ping((err) => {
      clearTimeout(timer);
      if (err !== null) s.destroy();
    });
    if (!sent) {
      clearTimeout(timer);
      s.destroy();
    }
  }

  /**
   * One call: resolves with the answer message, rejects with GrpcStatusError (the server said
   * no) or another Error (no answer: the call may or may not have been applied).
   */
  call(path: string, message: Uint8Array, deadlineMs: number, headers: Readonly<Record<string, string>> = {}): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('grpc channel closed'));
    return new Promise<Buffer>((resolve, reject) => {
      let session: http2.ClientHttp2Session;
      let stream: http2.ClientHttp2Stream;
      const frame = Buffer.allocUnsafe(5 + message.length);
      frame[0] = 0;
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      try {
        session = this.#open();
        stream = session.request(
          { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': `${Math.max(1, Math.ceil(deadlineMs))}m`, ...headers },
          { endStream: false },
        );
      } catch (err) {
        reject(err as Error);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let status: string | undefined;
      let statusMessage: string | undefined;
      let httpStatus = 0;
      let settled = false;
      const settle = (err: Error | null, answer?: Buffer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err !== null) reject(err);
        else resolve(answer!);
      };
      const timer = setTimeout(() => {
        settle(new Error(`grpc ${path}: no answer within ${deadlineMs} ms`));
        stream.close(http2.constants.NGHTTP2_CANCEL);
        this.#probe(session, deadlineMs);
      }, deadlineMs);
      stream.on('response', (headers) => {
        httpStatus = Number(headers[':status']);
        // Trailers-Only: the status comes with the headers and there is no body.
        if (headers['grpc-status'] !== undefined) {
          status = String(headers['grpc-status']);
          statusMessage = grpcMessage(headers['grpc-message']);
        }
      });
      stream.on('trailers', (trailers) => {
        status = String(trailers['grpc-status']);
        statusMessage = grpcMessage(trailers['grpc-message']);
      });
      stream.on('data', (d: Buffer) => {
        size += d.length;
        if (size > MAX_ANSWER_BYTES) {
          settle(new Error(`grpc ${path}: answer larger than ${MAX_ANSWER_BYTES} bytes`));
          stream.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        chunks.push(d);
      });
      stream.on('end', () => {
        if (httpStatus !== 200) return settle(new Error(`grpc ${path}: HTTP status ${httpStatus}`));
        if (status === undefined) return settle(new Error(`grpc ${path}: the answer has no grpc-status`));
        if (status !== '0') return settle(new GrpcStatusError(Number(status), statusMessage ?? ''));
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        // One message: flag 0 (this client asks for no compression), its length, the message.
        if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) return settle(new Error(`grpc ${path}: a malformed answer of ${body.length} bytes`));
        settle(null, body.subarray(5));
      });
      stream.on('error', (err: Error) => settle(err));
      stream.on('close', () => settle(new Error(`grpc ${path}: the stream closed without an answer (HTTP/2 code ${stream.rstCode})`)));
      stream.end(frame);
    });
  }

  close(): void {
    this.#closed = true;
    this.#session?.close();
    this.#session = null;
  }
}
