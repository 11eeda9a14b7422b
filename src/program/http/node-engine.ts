/**
 * The `node:http` engine: the fallback where uWS has no binary (Node > 20, other platforms) and
 * the `--http-engine node` choice. Same contract as the uWS engine, same observable behaviour.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { type AddressInfo, type Socket } from 'node:net';
import {
  type BodyDone,
  type HeaderList,
  type HttpEngine,
  type HttpRequest,
  type HttpResponse,
  type HttpServerHandle,
  type ListenOptions,
  type RequestHandler,
  type ResponseBody,
  bodyBytes,
  isParts,
  requestOf,
  streamedRequestOf,
  wholeBody,
  withLength,
} from './engine';
import { listenError } from './listen-errors';
import { OpenResponses } from './open-responses';
import { runHandler } from './run-handler';
import { type EngineLog, type Paced, WRITE_IDLE_MS, type WriteCut, logCut, pacer } from './write-pacing';

type RequestHead = Omit<HttpRequest, 'body'>;
type Refusal = ReturnType<ListenOptions['tooLarge']>;

const EMPTY = Buffer.alloc(0);

/** Idle keep-alive connections close after this long; uWS uses the same 10 s. */
const KEEP_ALIVE_TIMEOUT_MS = 10_000;

/**
 * After a 413 the rest of the body is read and dropped, up to this many bytes within LINGER_MS,
 * before the connection is closed (nginx's lingering close). Closing a socket that still has
 * unread bytes makes the kernel send a reset, which can reach the client before it has read the
 * 413 (it sees EPIPE or ECONNRESET instead of the answer); a body that ends within the bounds
 * leaves the connection open for the next request.
 */
const LINGER_BYTES = 1 << 20;
const LINGER_MS = 5_000;

/** `log` gets the responses the engine cuts (write-pacing.ts). */
export function createNodeEngine(log: EngineLog = WARNINGS): HttpEngine {
  return { name: 'node', listen: (options, handler) => listen(options, handler, log) };
}

/** Where cuts go without a logger: a process warning (stderr). */
const WARNINGS: EngineLog = { warn: (obj, msg) => process.emitWarning(`${msg}: ${JSON.stringify(obj)}`, { code: 'SVC_HTTP_CUT' }) };

/** What every response of one listener shares: its write-idle timeout and where its cuts are reported. */
interface ResponseContext {
  readonly idleMs: number;
  readonly listener: string | undefined;
  cut(c: WriteCut): void;
}

async function listen(options: ListenOptions, handler: RequestHandler, log: EngineLog): Promise<HttpServerHandle> {
  const inFlight = new OpenResponses();
  const context: ResponseContext = { idleMs: options.writeIdleMs ?? WRITE_IDLE_MS, listener: options.name, cut: (c) => logCut(log, c) };
  // requestTimeout 0: a long-poll may legitimately wait minutes for its response.
  const onReq = (expectContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, options, handler, inFlight, expectContinue, context);
  const server: Server =
    options.tls === undefined
      ? createServer({ requestTimeout: 0 }, onReq(false))
      : createTlsServer({ requestTimeout: 0, cert: readFileSync(options.tls.cert), key: readFileSync(options.tls.key) }, onReq(false));
  if (options.streamBodies === true) {
    // The handler answers `Expect: 100-continue` once it has accepted the request; any other
    // expectation is ignored (as S3 does) instead of node's automatic 417.
    server.on('checkContinue', onReq(true));
    server.on('checkExpectation', onReq(false));
  }
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Not events.once(): that would also reject on a listen error, unhandled.
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  // node:http never sets SO_REUSEPORT: a port another process listens on fails with EADDRINUSE.
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error): void => reject(listenError(options, err));
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return new NodeServer(server, (server.address() as AddressInfo).port, inFlight, closed);
}

function onRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: ListenOptions,
  handler: RequestHandler,
  inFlight: OpenResponses,
  expectContinue: boolean,
  context: ResponseContext,
): void {
  const head = copyRequest(req);
  const response = new NodeResponse(res, head.method === 'HEAD', inFlight.add(), context);
  const declared = declaredBodyLength(head.headers);
  if (options.streamBodies === true) {
    runHandler(handler, streamedRequestOf(head, EMPTY, declared === 0 ? null : req, expectContinue), response);
    return;
  }
  if (declared === 0) {
    runHandler(handler, requestOf(head, EMPTY), response);
    return;
  }
  if (declared > options.bodyLimit) {
    // (node has answered any `Expect: 100-continue` itself: the body is on its way.)
    refuseLingering(req, response, options.tooLarge(head), declared);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size <= options.bodyLimit) {
      chunks.push(chunk);
      return;
    }
    // Stop buffering at once; the rest of the body is read and dropped.
    req.off('data', onData);
    req.off('end', onEnd);
    chunks.length = 0;
    refuseLingering(req, response, options.tooLarge(head), declared < 0 ? LINGER_BYTES : declared - size);
  };
  const onEnd = (): void => {
    if (response.aborted) return;
    runHandler(handler, requestOf(head, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)), response);
  };
  req.on('data', onData);
  req.on('end', onEnd);
}

/**
 * Answer `reply` (a 413) and read and drop the rest of the body, at most `LINGER_BYTES` of it
 * (`left` when its length is known) within `LINGER_MS`; past either bound the connection closes.
 */
function refuseLingering(req: IncomingMessage, response: NodeResponse, reply: Refusal, left: number): void {
  if (left > LINGER_BYTES) {
    response.refuse(reply);
    return;
  }
  response.refuse(reply, false);
  let dropped = 0;
  const close = (): void => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) close();
  });
  req.resume();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
}

function copyRequest(req: IncomingMessage): RequestHead {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  // req.headers drops repeats of some headers and makes set-cookie an array; the contract
  // wants every repeat joined, so build from the raw list.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const prior = headers[name];
    headers[name] = prior === undefined ? raw[i + 1]! : `${prior}, ${raw[i + 1]!}`;
  }
  return {
    method: req.method ?? 'GET',
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? '' : url.slice(q + 1),
    headers,
  };
}

/** The declared body length; -1 when the body is chunked (length unknown), 0 when there is none. */
function declaredBodyLength(headers: Readonly<Record<string, string>>): number {
  const length = headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    return Number.isSafeInteger(n) && n >= 0 ? n : -1;
  }
  return headers['transfer-encoding'] === undefined ? 0 : -1;
}

/** 1xx, 204 and 304 responses have no body (RFC 9110 §6.4.1). */
function bodyAllowed(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

/** 1xx and 204 must not carry Content-Length either; 304 and HEAD may (the GET's length). */
function lengthAllowed(status: number): boolean {
  return status >= 200 && status !== 204;
}

/** The caller's headers minus framing headers, which this adapter sets itself (same rule as uWS). */
function headerPairs(headers: HeaderList, keepLength: boolean): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (lower === 'transfer-encoding' || (lower === 'content-length' && !keepLength)) continue;
    pairs.push([name, value]);
  }
  return pairs;
}

function headerValue(headers: HeaderList, lowerName: string): string | undefined {
  for (const [name, value] of headers) if (name.toLowerCase() === lowerName) return value;
  return undefined;
}

/**
 * Bytes of `socket` not yet in the kernel: the stream's buffer and libuv's write queue (what a
 * write the kernel did not take whole still holds). `writeQueueSize` is the handle's own count.
 */
function pendingBytes(socket: Socket): number {
  const handle = (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle;
  return socket.writableLength + (typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0);
}

class NodeResponse implements HttpResponse, Paced {
  readonly #res: ServerResponse;
  readonly #isHead: boolean;
  readonly #context: ResponseContext;
  /** In the pacer: bytes wait for the client. */
  #paced = false;
  /** Cut by the write-idle timeout: its 'close' is an abort even if node counts the body as written. */
  #cut = false;
  /** Bytes of the socket the kernel had taken at the last tick. */
  #lastTaken = 0;
  #lastProgress = 0;
  #aborted = false;
  #started = false;
  #ended = false;
  /** We destroyed the socket ourselves (a fixed-length body that fell short): not an abort. */
  #selfClosed = false;
  #backpressured = false;
  /** Bytes the declared Content-Length of a streamed response still allows; -1 when chunked. */
  #remaining = -1;
  #abortCb: (() => void) | undefined;
  #writableCb: (() => void) | undefined;

  constructor(res: ServerResponse, isHead: boolean, onSettled: () => void, context: ResponseContext) {
    this.#res = res;
    this.#isHead = isHead;
    this.#context = context;
    // 'close' follows 'finish' for every response; before it, it means the client went away.
    res.on('close', () => {
      onSettled();
      // writableFinished counts bytes handed to libuv as written: a cut response reports itself.
      if ((res.writableFinished && !this.#cut) || this.#selfClosed) return;
      this.#aborted = true;
      this.#abortCb?.();
    });
    res.on('drain', () => {
      if (this.#aborted || !this.#backpressured) return;
      this.#backpressured = false;
      this.#writableCb?.();
    });
    // A write racing a reset socket reports here; `aborted` already covers it.
    res.on('error', () => {});
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get sent(): boolean {
    return this.#started;
  }

  onAborted(cb: () => void): void {
    if (this.#aborted) cb();
    else this.#abortCb = cb;
  }

  onWritable(cb: () => void): void {
    this.#writableCb = cb;
  }

  writeContinue(): void {
    if (!this.#started && !this.#aborted) this.#res.writeContinue();
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    if (this.#ended || this.#aborted) return done?.();
    if (this.#started) throw new Error('send() after writeHead()');
    if (isParts(body) && !this.#isHead && bodyAllowed(status)) {
      // Parts are written one after another, as they are (a read page of the read cache's views).
      this.writeHead(status, withLength(headers, bodyBytes(body)));
      for (const part of body) this.write(part);
      this.end();
    } else this.#complete(status, headers, wholeBody(body), false);
    // 'finish': the last write's callback ran, so the socket has handed every byte of the body to
    // the kernel. A client that leaves first gets 'close' alone: the socket may still hold the
    // body in a write of its own, so `done` is never called and the body is left to the GC.
    if (done !== undefined) this.#res.once('finish', done);
  }

  /**
   * Sends the `tooLarge` response and, unless `close` is false (the caller drains the rest of the
   * body: refuseLingering), closes the connection, so the client stops uploading.
   */
  refuse(response: Refusal, close = true): void {
    if (this.#ended || this.#aborted) return;
    // The listeners' refusals say `connection: close` (the uWS engine closes by it); a drained one keeps the connection.
    const headers = close ? response.headers : response.headers.filter(([name]) => name.toLowerCase() !== 'connection');
    this.#complete(response.status, headers, response.body, close);
  }

  writeHead(status: number, headers: HeaderList): void {
    if (this.#ended || this.#aborted) return;
    if (this.#started) throw new Error('writeHead() called twice');
    const noBody = this.#isHead || !bodyAllowed(status);
    const length = noBody ? -1 : Number(headerValue(headers, 'content-length') ?? -1);
    const fixed = Number.isSafeInteger(length) && length >= 0;
    this.#res.writeHead(status, headerPairs(headers, fixed || (noBody && lengthAllowed(status))));
    this.#started = true;
    this.#remaining = fixed ? length : -1;
  }

  write(chunk: Uint8Array | string): boolean {
    if (this.#ended || this.#aborted) return false;
    if (!this.#started) this.writeHead(200, []);
    const bytes = this.#clip(chunk);
    if (bytes === undefined) return true;
    const ok = this.#res.write(bytes); // node drops body bytes of HEAD, 204 and 304 itself
    if (!ok) this.#backpressured = true;
    this.#watch();
    return ok;
  }

  end(chunk?: Uint8Array | string): void {
    if (this.#ended || this.#aborted) return;
    if (!this.#started) {
      this.send(200, [], chunk);
      return;
    }
    const bytes = chunk === undefined ? undefined : this.#clip(chunk);
    this.#ended = true;
    if (this.#remaining > 0) {
      // The body fell short of its Content-Length: only a closed connection tells the client.
      this.#selfClosed = true;
      this.#res.destroy();
      return;
    }
    if (bytes === undefined) this.#res.end();
    else this.#res.end(bytes);
    this.#watch();
  }

  destroy(): void {
    if (this.#aborted || this.#res.writableFinished || this.#selfClosed) return;
    this.#ended = true;
    this.#selfClosed = true; // not an abort: the 'close' handler stays quiet
    this.#res.destroy();
  }

  #complete(status: number, headers: HeaderList, body: Uint8Array | string | undefined, closeConnection: boolean): void {
    const noBody = this.#isHead || !bodyAllowed(status);
    const keepLength = noBody && lengthAllowed(status);
    const pairs = headerPairs(headers, keepLength);
    // A body gets its true length; HEAD and 304 keep the caller's (the length a GET would have had).
    const addLength = !noBody || (keepLength && body !== undefined && headerValue(headers, 'content-length') === undefined);
    if (addLength) pairs.push(['content-length', String(body === undefined ? 0 : bodyBytes(body))]);
    if (closeConnection) pairs.push(['connection', 'close']);
    this.#res.writeHead(status, pairs); // throws on invalid headers, before we count as started
    this.#ended = true;
    this.#started = true;
    if (body === undefined || noBody) this.#res.end();
    else this.#res.end(body);
    this.#watch();
  }

  /** Paces the response while bytes of it wait for the client (node writes them as the socket takes them; this only watches). */
  #watch(): void {
    if (this.#paced) return;
    const socket = this.#res.socket;
    if (socket === null || socket.destroyed) return;
    const pending = pendingBytes(socket);
    if (pending === 0) return;
    this.#paced = true;
    this.#lastTaken = socket.bytesWritten - pending;
    this.#lastProgress = performance.now();
    pacer.add(this);
  }

  /**
   * A pacer tick (write-pacing.ts): the client took bytes if the kernel took more of the socket's
   * bytes than at the last tick (what was written to it, less what still waits); one that took
   * none for the write-idle timeout is cut (logged; the handler sees an abort).
   */
  pace(now: number, stalled: boolean): boolean {
    const socket = this.#res.socket;
    if (socket === null || socket.destroyed || this.#aborted || this.#selfClosed) return (this.#paced = false);
    const pending = pendingBytes(socket);
    if (pending === 0) return (this.#paced = false);
    const taken = socket.bytesWritten - pending;
    if (taken > this.#lastTaken) this.#lastProgress = now;
    this.#lastTaken = taken;
    if (stalled || now - this.#lastProgress < this.#context.idleMs) return true;
    this.#paced = false;
    this.#context.cut({
      reason: 'write_idle',
      ...(this.#context.listener === undefined ? {} : { listener: this.#context.listener }),
      idleMs: Math.round(now - this.#lastProgress),
      sentBytes: Math.max(0, socket.bytesWritten - pending), // headers included
      pendingBytes: pending,
    });
    // The 'close' handler reports an abort, as for a client that left.
    this.#cut = true;
    socket.destroy();
    return false;
  }

  /** Cuts a chunk to the declared Content-Length; undefined when nothing of it may be sent. */
  #clip(chunk: Uint8Array | string): Uint8Array | string | undefined {
    if (this.#remaining < 0) return chunk;
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.byteLength > this.#remaining) bytes = bytes.subarray(0, this.#remaining);
    this.#remaining -= bytes.byteLength;
    return bytes.byteLength > 0 ? bytes : undefined;
  }
}

class NodeServer implements HttpServerHandle {
  readonly port: number;
  readonly #server: Server;
  readonly #inFlight: OpenResponses;
  readonly #closed: Promise<void>;
  #accepting = true;
  #closing: Promise<void> | undefined;

  constructor(server: Server, port: number, inFlight: OpenResponses, closed: Promise<void>) {
    this.#server = server;
    this.port = port;
    this.#inFlight = inFlight;
    this.#closed = closed;
  }

  stopAccepting(): void {
    if (!this.#accepting) return;
    this.#accepting = false;
    // Also drops idle keep-alive connections (Node ≥ 19); busy ones finish their response.
    this.#server.close();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.stopAccepting();
    this.#server.closeIdleConnections();
    await this.#inFlight.idle();
    this.#server.closeAllConnections();
    await this.#closed;
  }
}
