/**
 * The uWebSockets.js engine: the only file that touches `@trufflesuite/uws-js-unofficial`.
 *
 * uWS rules kept here so that no handler ever has to know them:
 * - the uWS request object dies when the route handler returns, so it is copied first;
 * - every response gets an abort handler before the route handler returns (uWS terminates otherwise);
 * - after `onAborted` fired or the response ended, touching `res` throws: every method checks first;
 * - writes from async context go inside `res.cork()` (one syscall, and required by uWS).
 */
import type * as Uws from '@trufflesuite/uws-js-unofficial';
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
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
import { listenError, probeListen } from './listen-errors';
import { OpenResponses } from './open-responses';
import { UwsBody } from './uws-body';
import { runHandler } from './run-handler';
import { type EngineLog, type Paced, WRITE_IDLE_MS, type WriteCut, logCut, pacer } from './write-pacing';

type UwsModule = typeof Uws;
export type RequestHead = Omit<HttpRequest, 'body'>;

const EMPTY = Buffer.alloc(0);

/**
 * Loads the native uWS binary for this platform and Node ABI; throws when there is none.
 * The package's own entry point swallows that failure and hands back a slow, partial pure-JS
 * imitation (after printing to the console), so we load the binary ourselves and let
 * `loadHttpEngine` fall back to our `node:http` engine instead.
 */
function loadNative(): UwsModule {
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`@trufflesuite/uws-js-unofficial/binaries/${file}`) as UwsModule;
}

/** Creates the uWS engine; throws when uWS has no binary for this Node version or platform. `log` gets the cuts. */
export function createUwsEngine(log: EngineLog = WARNINGS): HttpEngine {
  const uws = loadNative();
  return { name: 'uws', listen: (options, handler) => listen(uws, options, handler, log) };
}

/** Where cuts go without a logger: a process warning (stderr). */
const WARNINGS: EngineLog = { warn: (obj, msg) => process.emitWarning(`${msg}: ${JSON.stringify(obj)}`, { code: 'SVC_HTTP_CUT' }) };

/** What every response of one listener shares: its write-idle timeout and where its cuts are reported. */
export interface ResponseContext {
  readonly idleMs: number;
  readonly listener: string | undefined;
  cut(c: WriteCut): void;
}

function contextOf(options: Omit<ListenOptions, 'tooLarge'>, cut: (c: WriteCut) => void): ResponseContext {
  return { idleMs: options.writeIdleMs ?? WRITE_IDLE_MS, listener: options.name, cut };
}

/** What to do with a request whose body is over the limit: answer it (`UwsResponse.refuse`). */
export type RefuseTooLarge = (head: RequestHead, response: UwsResponse) => void;

/**
 * This thread's app only: `options.threads` is served by the wrapper in io-threads.ts. It listens
 * with LIBUS_LISTEN_EXCLUSIVE_PORT (no SO_REUSEPORT), so a port another process holds is refused
 * instead of shared (README.md, "One process per port").
 */
function listen(uws: UwsModule, options: ListenOptions, handler: RequestHandler, log: EngineLog): Promise<UwsServer> {
  return listenApp(uws, options, handler, (head, response) => response.refuse(options.tooLarge(head)), contextOf(options, (c) => logCut(log, c)), false);
}

/**
 * One uWS app on `options.host:options.port` for an I/O thread: with SO_REUSEPORT (uSockets'
 * default), so the apps of a listener's threads share its port; io-threads.ts has made sure no
 * other process holds it. `cut` is told of every response the engine cuts.
 */
export function listenUws(options: Omit<ListenOptions, 'tooLarge'>, handler: RequestHandler, refuseTooLarge: RefuseTooLarge, cut: (c: WriteCut) => void): Promise<UwsServer> {
  return listenApp(loadNative(), options, handler, refuseTooLarge, contextOf(options, cut), true);
}

function listenApp(
  uws: UwsModule,
  options: Omit<ListenOptions, 'tooLarge'>,
  handler: RequestHandler,
  refuseTooLarge: RefuseTooLarge,
  context: ResponseContext,
  reusePort: boolean,
): Promise<UwsServer> {
  // uWS reads the PEM files itself when the app is made (and makes an app that serves nothing if it
  // cannot): read them first, so a bad path or file is a clear error at startup.
  if (options.tls !== undefined) for (const file of [options.tls.cert, options.tls.key]) readFileSync(file);
  const app = options.tls === undefined ? uws.App() : uws.SSLApp({ cert_file_name: options.tls.cert, key_file_name: options.tls.key });
  const inFlight = new OpenResponses();
  app.any('/*', (res, req) => {
    dispatching = res;
    try {
      onRequest(res, req, options, handler, inFlight, refuseTooLarge, context);
    } finally {
      dispatching = undefined;
    }
  });
  return new Promise((resolve, reject) => {
    // uWS calls back synchronously, with `false` instead of an error (no reason given).
    const listening = (socket: Uws.us_listen_socket | false): void => {
      if (socket === false) {
        closeApp(app);
        // The reason, found with node:net; an I/O thread's siblings hold the port, so it cannot ask.
        const why = reusePort ? Promise.resolve(null) : probeListen(options.host, options.port);
        void why.then((err) => reject(listenError(options, err ?? new Error('uWS could not listen (address in use or not available)'))));
        return;
      }
      resolve(new UwsServer(uws, app, socket, inFlight));
    };
    // The typings list the option only without a host; this build takes (host, port, options, cb) too.
    const listenWith = app.listen.bind(app) as unknown as (host: string, port: number, options: number, cb: (s: Uws.us_listen_socket | false) => void) => void;
    if (reusePort) app.listen(options.host, options.port, listening);
    else listenWith(options.host, options.port, LIBUS_LISTEN_EXCLUSIVE_PORT, listening);
  });
}

/**
 * The uWS response whose request uWS is dispatching right now (its route handler has not
 * returned), else undefined. uWS corks a socket while it parses and dispatches what arrived on
 * it, and `res.cork(cb)` on a socket already corked only calls `cb`; so a response written while
 * its own request is dispatched (every cache hit answered at once) is written directly, without
 * the call into uWS and back into JavaScript that `cork` costs (about 0.2 µs a response here).
 * Anything written later, or to another response, still goes through `cork`.
 */
let dispatching: Uws.HttpResponse | undefined;

function onRequest(
  res: Uws.HttpResponse,
  req: Uws.HttpRequest,
  options: Omit<ListenOptions, 'tooLarge'>,
  handler: RequestHandler,
  inFlight: OpenResponses,
  refuseTooLarge: RefuseTooLarge,
  context: ResponseContext,
): void {
  // Nothing inherited, so a header called `constructor` or `__proto__` is just a header.
  const headers: Record<string, string> = Object.create(HEADERS_PROTO) as Record<string, string>;
  const repeated = copyHeaders(req, headers);
  // uWS lower-cases the method; getUrl() is the raw path without the query.
  const method = upperMethod(req.getMethod());
  const path = req.getUrl();
  const query = req.getQuery() ?? '';
  const head: RequestHead = { method, path, query, headers };
  const response = new UwsResponse(res, head.method === 'HEAD', inFlight.add(), context);
  // uWS parses less strictly than node:http: what it lets through that node refuses is refused
  // here with node's answer (400, connection closed), before any body byte is read.
  const malformed = malformedHead(head, repeated);
  if (malformed !== null) {
    // Answered on the next turn, not now: uWS dispatches a pipelined request that follows in the
    // same packet as soon as this handler returns, even after end(…, close). With this response
    // still pending, uWS closes the connection instead of running what was smuggled behind it.
    setImmediate(() => response.refuse({ status: malformed.status, headers: [['content-type', 'text/plain; charset=utf-8']], body: malformed.message }));
    return;
  }
  const declared = declaredBodyLength(head.headers);
  if (options.streamBodies === true) {
    // uWS has answered `Expect: 100-continue` already, as the head arrived (this build gives JS no
    // say); the body is read from the first byte, before the handler decides anything.
    const expectContinue = head.headers['expect']?.toLowerCase() === '100-continue';
    const bodyStream = declared === 0 ? null : new UwsBody(res, response);
    if (bodyStream !== null) response.body = bodyStream;
    runHandler(handler, streamedRequestOf(head, EMPTY, bodyStream, expectContinue), response);
    return;
  }
  if (declared === 0) {
    runHandler(handler, requestOf(head, EMPTY), response);
  } else if (declared > options.bodyLimit) {
    // Refused before a single body byte is buffered; the connection is closed after the
    // response so the client stops uploading.
    refuseTooLarge(head, response);
  } else {
    readBody(res, declared, options.bodyLimit, response, {
      complete: (body) => runHandler(handler, requestOf(head, body), response),
      tooLarge: () => refuseTooLarge(head, response),
    });
  }
}

/**
 * The prototype of request header records: empty, frozen, itself without a prototype. An object
 * made by `Object.create(null)` is a dictionary from birth, and every header stored into one
 * misses its inline cache and goes through the runtime (about 1.5 µs of a 4 KiB cache hit in
 * svc-cache, measured); one on this prototype is an ordinary fast object that inherits nothing.
 */
const HEADERS_PROTO: object = Object.freeze(Object.create(null) as object);
/** Whether `s` is all ASCII: a loop, as header values are short (a regex test is a call per value). */
function asciiOnly(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Copies the headers out of the short-lived uWS request into `headers`; returns the name of a
 * header that may be given once but came twice, else null.
 *
 * uWS hands header values over decoded as UTF-8; node:http decodes them as latin1, one char per
 * byte. Values are re-read as latin1 here so both engines give handlers the same string for the
 * same bytes, and nothing a client sends can come back as a char above U+00FF (which no header
 * can carry: echoing one would throw while writing the response).
 */
function copyHeaders(req: Uws.HttpRequest, headers: Record<string, string>): string | null {
  copying = headers;
  copyRepeated = null;
  req.forEach(copyHeader);
  copying = EMPTY_HEADERS;
  return copyRepeated;
}

/**
 * copyHeaders' state while uWS calls `copyHeader` back (synchronously, once per header): one
 * function for every request rather than a closure made, and compiled on first call, per request.
 */
const EMPTY_HEADERS: Record<string, string> = Object.create(HEADERS_PROTO) as Record<string, string>;
let copying = EMPTY_HEADERS;
let copyRepeated: string | null = null;

function copyHeader(name: string, raw: string): void {
  const headers = copying;
  const value = asciiOnly(raw) ? raw : Buffer.from(raw, 'utf8').toString('latin1');
  const prior = headers[name];
  if (prior === undefined) headers[name] = value;
  else {
    headers[name] = `${prior}, ${value}`;
    if (SINGLE_HEADERS.has(name)) copyRepeated = name;
  }
}

/** The upper-case method: the common ones without a case conversion per request. */
function upperMethod(m: string): string {
  switch (m) {
    case 'get':
      return 'GET';
    case 'head':
      return 'HEAD';
    case 'put':
      return 'PUT';
    case 'post':
      return 'POST';
    case 'delete':
      return 'DELETE';
    default:
      return m.toUpperCase();
  }
}

/** Headers a request may carry once (RFC 9112 §6.3): a repeat is refused, as node:http does. */
const SINGLE_HEADERS = new Set(['content-length']);

/**
 * node:http's default limit on a request head (`--max-http-header-size`, 16 KiB), answered with
 * 431 (RFC 6585 §5). uWS takes far larger heads; the same limit on both engines.
 */
const MAX_HEAD_BYTES = 16 * 1024;

// Visible ASCII only: node:http refuses a request target with a space, a control char or a raw
// byte above 0x7e (RFC 9112 §3.2: the target is a URI, which is ASCII); so does this engine.
const BAD_TARGET = /[^\x21-\x7e]/;

/**
 * Why a request uWS accepted must be refused (RFC 9112), or null. Checked:
 * - a raw non-ASCII or control byte in the request target (§3.2);
 * - a head over 16 KiB (431, as node:http);
 * - Content-Length repeated (with the same value or not: node refuses both) or not a plain
 *   decimal number, Content-Length beside Transfer-Encoding, or a Transfer-Encoding whose last
 *   coding is not chunked (§6.1, §6.3: a request whose body length is uncertain is a smuggling
 *   vector, so it is a 400 and the connection is closed).
 */
function bad(message: string): { status: 400; message: string } {
  return { status: 400, message: `bad request: ${message}` };
}

function malformedHead(head: RequestHead, repeated: string | null): { status: 400 | 431; message: string } | null {
  if (BAD_TARGET.test(head.path) || BAD_TARGET.test(head.query)) return bad('the request target must be visible ASCII (percent-encode other bytes)');
  const h = head.headers;
  let size = head.method.length + head.path.length + head.query.length;
  for (const name in h) size += name.length + h[name]!.length + 4;
  if (size > MAX_HEAD_BYTES) return { status: 431, message: `the request head is limited to ${MAX_HEAD_BYTES} bytes` };
  const length = h['content-length'];
  const coding = h['transfer-encoding'];
  if (repeated !== null) return bad('Content-Length is given more than once');
  if (length !== undefined && !/^\d{1,15}$/.test(length)) return bad('Content-Length is not a decimal number');
  if (length !== undefined && coding !== undefined) return bad('Content-Length and Transfer-Encoding cannot both be given');
  if (coding !== undefined && coding.split(',').pop()!.trim().toLowerCase() !== 'chunked') return bad('Transfer-Encoding must end with chunked');
  return null;
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

interface BodySink {
  complete(body: Buffer): void;
  tooLarge(): void;
}

/** How much of an oversized chunked body is read and dropped before the connection is cut. */
const DISCARD_FACTOR = 4;

/** Reads the body chunk by chunk, refusing it once it passes `limit`. */
function readBody(res: Uws.HttpResponse, declared: number, limit: number, response: UwsResponse, sink: BodySink): void {
  // With a declared length every chunk is copied straight into its place, once.
  const whole = declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  let discarding = false;
  res.onData((chunk, isLast) => {
    if (done || response.aborted) return;
    const end = size + chunk.byteLength;
    if (discarding) {
      // A chunked body over the limit is read to its end (up to a bound) before the refusal:
      // closing mid-upload makes the client fail with EPIPE instead of reading the 413.
      size = end;
      if (isLast || size > limit * DISCARD_FACTOR) {
        done = true;
        sink.tooLarge();
      }
      return;
    }
    if (end > limit || (whole !== undefined && end > whole.length)) {
      if (whole === undefined && !isLast) {
        discarding = true;
        size = end;
        chunks.length = 0;
        return;
      }
      done = true;
      sink.tooLarge();
      return;
    }
    // uWS neuters `chunk` when this callback returns: copy it now.
    if (whole !== undefined) whole.set(new Uint8Array(chunk), size);
    else if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    size = end;
    if (!isLast) return;
    done = true;
    sink.complete(whole !== undefined ? whole.subarray(0, size) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
}

/** uSockets' listen option that leaves SO_REUSEPORT unset (`ListenOptions` in the package's typings). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** `app.close()` exists in this build (v20.30) but not in its typings. */
function closeApp(app: Uws.TemplatedApp): void {
  (app as Uws.TemplatedApp & { close?: () => void }).close?.();
}

export class UwsServer implements HttpServerHandle {
  readonly port: number;
  readonly #uws: UwsModule;
  readonly #app: Uws.TemplatedApp;
  readonly #inFlight: OpenResponses;
  #listenSocket: Uws.us_listen_socket | undefined;
  #closing: Promise<void> | undefined;

  constructor(uws: UwsModule, app: Uws.TemplatedApp, listenSocket: Uws.us_listen_socket, inFlight: OpenResponses) {
    this.#uws = uws;
    this.#app = app;
    this.#listenSocket = listenSocket;
    this.#inFlight = inFlight;
    this.port = uws.us_socket_local_port(listenSocket as Uws.us_socket);
  }

  stopAccepting(): void {
    if (this.#listenSocket === undefined) return;
    this.#uws.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = undefined;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.stopAccepting();
    await this.#inFlight.idle();
    // app.close() closes every remaining (idle keep-alive) connection at once. Without it, JS
    // cannot reach those sockets; uWS drops idle ones after its 10 s keep-alive timeout.
    closeApp(this.#app);
  }
}

/** 1xx, 204 and 304 responses have no body (RFC 9110 §6.4.1). */
function bodyAllowed(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

/** 1xx and 204 must not carry Content-Length either; 304 and HEAD may (the GET's length). */
function lengthAllowed(status: number): boolean {
  return status >= 200 && status !== 204;
}

/** Status lines by status (checkHead has found it an integer from 100 to 999): an array, no hashing per response. */
const statusLines: (string | undefined)[] = [];

/** uWS wants the whole status line ("200 OK"), not a number. */
function statusLine(status: number): string {
  let line = statusLines[status];
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines[status] = line;
  }
  return line;
}

/** RFC 9110 §5.6.2 token characters, by ASCII code (1 = allowed). */
const TOKEN_CHARS = (() => {
  const t = new Uint8Array(128);
  for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") t[c.charCodeAt(0)] = 1;
  return t;
})();

/** Whether `name` is a token (a valid header name): a table lookup per character, no set or regex per header. */
function isToken(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 127 || TOKEN_CHARS[c] === 0) return false;
  }
  return true;
}
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Whether `value` is only tab and visible ASCII (valid, and needing no latin1 conversion). A loop
 * rather than a regular expression: header values are short, and a regex test costs a call into
 * the regex engine per value (and flattens a concatenated value first), about 30 ns each; a cache
 * hit checks about ten values.
 */
function plainValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) return false;
  }
  return true;
}

/**
 * uWS writes header bytes verbatim; refuse what node:http refuses (CR/LF would split the response).
 * Returns true when every value is plain ASCII (writeHeaders then skips its latin1 check).
 */
export function checkHead(status: number, headers: HeaderList): boolean {
  let plain = true;
  if (!Number.isInteger(status) || status < 100 || status > 999) throw new RangeError(`invalid HTTP status ${status}`);
  for (const [name, value] of headers) {
    if (!isToken(name)) throw new TypeError(`invalid HTTP header ${JSON.stringify(name)}`);
    if (plainValue(value)) continue;
    plain = false;
    if (BAD_VALUE_CHAR.test(value)) throw new TypeError(`invalid HTTP header ${JSON.stringify(name)}`);
  }
  return plain;
}

/** Whether `name` may be one of the framing headers writeHeaders looks at (their lengths: 10, 14, 17). */
function maybeFraming(name: string): boolean {
  const n = name.length;
  return n === 10 || n === 14 || n === 17;
}

function headerValue(headers: HeaderList, lowerName: string): string | undefined {
  for (const [name, value] of headers) if (name.toLowerCase() === lowerName) return value;
  return undefined;
}

/**
 * uWS frames bodies itself (Content-Length or chunked), so the caller's framing headers are dropped
 * unless `keepLength`. Returns true when the headers ask to close the connection after the response.
 *
 * When every value is plain ASCII (`plain`, from checkHead), the whole block goes to uWS in one
 * call: the first name, and as its value the rest (`v1\r\nname2: v2…`), which uWS copies as it
 * copies any value. Each call into uWS converts its strings to UTF-8, about 40 ns a header. This is
 * safe only because checkHead has already refused CR, LF and every other control character in
 * names and values, so the block is exactly the lines separate calls would write.
 */
function writeHeaders(res: Uws.HttpResponse, headers: HeaderList, keepLength: boolean, plain: boolean): boolean {
  let close = false;
  let first: string | undefined;
  let block = '';
  for (const [name, value] of headers) {
    if (maybeFraming(name)) {
      // Programs write these names in lower case: no case conversion per response for them.
      const lower = name === 'content-length' || name === 'connection' ? name : name.toLowerCase();
      if (lower === 'transfer-encoding' || (lower === 'content-length' && !keepLength)) continue;
      if (lower === 'connection' && value.toLowerCase() === 'close') close = true;
    }
    if (plain) {
      if (first === undefined) {
        first = name;
        block = value;
      } else block += '\r\n' + name + ': ' + value;
      continue;
    }
    // uWS writes a string as UTF-8; node:http writes header values as latin1, one byte per char.
    res.writeHeader(name, asciiOnly(value) ? value : Buffer.from(value, 'latin1'));
  }
  if (!close) {
    // The idle timeout announced, as node:http announces its own (RFC 9112 §9.3: a client that
    // reuses a connection the server is closing gets a reset).
    if (plain && first !== undefined) block += KEEP_ALIVE_LINE;
    else res.writeHeader('keep-alive', KEEP_ALIVE_HINT);
  }
  if (first !== undefined) res.writeHeader(first, block);
  return close;
}

/**
 * uWS closes a connection idle for 10 s (fixed in the binary; its timer ticks every 4 s, so the
 * close comes 8 to 12 s after the last response). A client reusing the connection as it closes
 * has its request reset. Announcing 5 s lets clients that honour `Keep-Alive: timeout` (undici
 * and fetch, node agents with a socket timeout, which retire a socket 1 s before the hint;
 * Apache HttpClient) retire idle connections well before uWS closes them.
 */
const KEEP_ALIVE_HINT = 'timeout=5';
const KEEP_ALIVE_LINE = '\r\nkeep-alive: ' + KEEP_ALIVE_HINT;

/** The status line and headers of a streamed response (its blank line goes out with the first body byte). */
function writeHead(res: Uws.HttpResponse, status: number, headers: HeaderList, keepLength: boolean, plain: boolean): void {
  res.writeStatus(statusLine(status));
  writeHeaders(res, headers, keepLength, plain);
}

/** A body this large is sent with `tryEnd` (no copy of what the socket does not take at once). */
const LARGE_BODY = 256 * 1024;

/**
 * - `chunked`: uWS `write()`, which buffers whatever the socket does not take and returns false.
 * - `fixed`: writeHead carried Content-Length; bytes go through `tryEnd`, which does not buffer,
 *   so the rest waits in our queue.
 * - `empty`: HEAD, 204, 304: body bytes are dropped.
 */
type StreamMode = 'idle' | 'chunked' | 'fixed' | 'empty';

export class UwsResponse implements HttpResponse, Paced {
  readonly #res: Uws.HttpResponse;
  readonly #isHead: boolean;
  readonly #onSettled: () => void;
  readonly #context: ResponseContext;
  #mode: StreamMode = 'idle';
  #aborted = false;
  /** send()/end() was called: later calls are no-ops. */
  #ended = false;
  /** uWS is done with the response (complete or aborted): `#res` must not be touched. */
  #settled = false;
  #backpressured = false;
  #abortCb: (() => void) | undefined;
  #writableCb: (() => void) | undefined;
  #total = 0;
  #remaining = 0;
  #queue: Uint8Array[] = [];
  /** A chunked response ended while backpressured: uWS's `end` waits for the next writable event. */
  #endPending = false;
  #endChunk: Uint8Array | string | undefined;
  /** In the pacer (write-pacing.ts): bytes wait for the client. */
  #paced = false;
  /** When the client last took bytes of this response (performance.now()). */
  #lastProgress = 0;
  /**
   * Told when the body given to send() is no longer needed: at settle (complete or aborted).
   * uWS reads a body only inside end/tryEnd, copying what the socket does not take at once (end)
   * or leaving it to us (tryEnd, `#queue`), so once settled nothing can read it again.
   */
  #bodyDone: BodyDone | undefined;
  /** A streamed request body (`streamBodies`), told when the client goes away. */
  body: UwsBody | undefined;

  constructor(res: Uws.HttpResponse, isHead: boolean, onSettled: () => void, context: ResponseContext) {
    this.#res = res;
    this.#isHead = isHead;
    this.#onSettled = onSettled;
    this.#context = context;
    res.onAborted(() => {
      if (this.#settled) return; // we closed it ourselves (a fixed-length body that fell short)
      this.#aborted = true;
      this.#settle();
      this.body?.aborted();
      this.#abortCb?.();
    });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get sent(): boolean {
    return this.#ended || this.#mode !== 'idle';
  }

  /** uWS still owns the response: `#res` may be touched (pause/resume of a streamed body). */
  get live(): boolean {
    return !this.#settled;
  }

  /** uWS has sent `100 Continue` by itself as the head arrived: nothing to do. */
  writeContinue(): void {}

  onAborted(cb: () => void): void {
    if (this.#aborted) cb();
    else this.#abortCb = cb;
  }

  onWritable(cb: () => void): void {
    this.#writableCb = cb;
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    if (this.#ended || this.#aborted) return done?.();
    if (this.#mode !== 'idle') throw new Error('send() after writeHead()');
    this.#bodyDone = done;
    const bytes = body === undefined ? 0 : bodyBytes(body);
    if (body !== undefined && typeof body !== 'string' && bytes >= LARGE_BODY && !this.#isHead && bodyAllowed(status) && headerValue(headers, 'connection') === undefined) {
      // tryEnd writes what the socket takes and leaves the rest where it is, in `body`; end()
      // would first copy the rest into uWS's own buffer (megabytes for a catch-up page).
      // The body's own length, whatever the caller's headers say (as for every send()).
      this.writeHead(status, withLength(headers, bytes));
      if (!isParts(body)) return this.end(body);
      // Parts go to tryEnd one after another, as they are (a read page of the read cache's views).
      this.#remaining -= bytes;
      for (const part of body) if (part.byteLength > 0) this.#queue.push(part);
      this.#res.cork(() => this.#flush());
      if (this.#queue.length > 0) this.#pushedBack();
      this.end();
      return;
    }
    this.#complete(status, headers, wholeBody(body), false);
  }

  /** Sends the `tooLarge` response and closes the connection, so the client stops uploading. */
  refuse(response: { status: number; headers: HeaderList; body: string }): void {
    if (this.#ended || this.#aborted) return;
    this.#complete(response.status, response.headers, response.body, true);
  }

  writeHead(status: number, headers: HeaderList): void {
    if (this.#ended || this.#aborted) return;
    if (this.#mode !== 'idle') throw new Error('writeHead() called twice');
    const plain = checkHead(status, headers);
    const noBody = this.#isHead || !bodyAllowed(status);
    const length = noBody ? -1 : Number(headerValue(headers, 'content-length') ?? -1);
    this.#mode = noBody ? 'empty' : Number.isSafeInteger(length) && length >= 0 ? 'fixed' : 'chunked';
    this.#total = this.#remaining = this.#mode === 'fixed' ? length : 0;
    const res = this.#res;
    // The blank line ending the headers goes out with the first body byte (as in node:http).
    if (dispatching === res) writeHead(res, status, headers, noBody && lengthAllowed(status), plain);
    else res.cork(() => writeHead(res, status, headers, noBody && lengthAllowed(status), plain));
    if (!noBody) res.onWritable(this.#writable);
  }

  write(chunk: Uint8Array | string): boolean {
    if (this.#ended || this.#aborted || this.#settled) return false;
    if (this.#mode === 'idle') this.writeHead(200, []);
    if (this.#mode === 'empty') return true;
    if (this.#mode === 'fixed') return this.#writeFixed(chunk);
    const res = this.#res;
    let ok = true;
    res.cork(() => {
      ok = res.write(chunk);
    });
    if (!ok) this.#pushedBack();
    return ok;
  }

  end(chunk?: Uint8Array | string): void {
    if (this.#ended || this.#aborted) return;
    if (this.#mode === 'idle') {
      this.send(200, [], chunk);
      return;
    }
    if (this.#mode === 'fixed') {
      if (chunk !== undefined && !this.#settled) this.#writeFixed(chunk);
      this.#ended = true;
      if (this.#queue.length === 0) this.#endFixed();
      return;
    }
    this.#ended = true;
    if (this.#mode === 'chunked' && this.#backpressured) {
      // uWS still holds bytes the client has not taken. Its end() would leave them, and the
      // response, to uWS's fixed 10 s timeout; ended on the next writable event instead, the
      // response stays paced (and cut only by the write-idle timeout) until then.
      this.#endPending = true;
      this.#endChunk = chunk;
      return;
    }
    const res = this.#res;
    res.cork(() => {
      if (this.#mode === 'empty') res.endWithoutBody();
      else res.end(chunk ?? '');
    });
    this.#settle();
  }

  destroy(): void {
    if (this.#settled || this.#aborted) return;
    this.#ended = true;
    this.#settle(); // first, so our abort handler stays quiet
    this.#res.close();
  }

  /**
   * A pacer tick (write-pacing.ts) while bytes wait for the client: offer the socket what waits
   * (a fixed-length body's queue through tryEnd; what uWS buffered of a chunked one through a
   * cork, whose uncork writes it), note whether the client took any, cut the response once it has
   * taken nothing for the write-idle timeout, and re-arm uWS's own timeout so that it never fires
   * first. Returns false once the response need not be paced any more.
   */
  pace(now: number, stalled: boolean): boolean {
    if (this.#settled || !this.#paced) {
      this.#paced = false;
      return false;
    }
    const res = this.#res;
    if (this.#mode === 'fixed') {
      const before = this.#queuedBytes();
      res.cork(() => this.#flush());
      if (this.#settled) return false; // the rest went out: complete
      if (this.#queuedBytes() < before) this.#lastProgress = now;
      if (this.#queue.length === 0) {
        // All handed to the socket: as a writable event would, let the caller write on (or end).
        this.#writable();
        if (!this.#paced || this.#settled) return false;
      }
    } else {
      // The uncork writes what uWS holds, as far as the socket takes it. Whether the client took
      // any is not visible here: a chunked response's progress is its writable events.
      res.cork(() => undefined);
    }
    if (!stalled && now - this.#lastProgress >= this.#context.idleMs) {
      this.#idleCut(now);
      return false;
    }
    // uWS's timer (10 s, checked every 4 s) is re-armed by its resume(); pause() before it keeps
    // the socket's poll events as they were. Not while a streamed request body is paused (the
    // socket reads nothing then, and resume would read again).
    if (this.body === undefined || !this.body.paused) {
      res.pause();
      res.resume();
    }
    return true;
  }

  /** The client took nothing for the write-idle timeout: logged, and the connection closed; the handler sees an abort. */
  #idleCut(now: number): void {
    const queued = this.#queuedBytes();
    this.#context.cut({
      reason: 'write_idle',
      ...(this.#context.listener === undefined ? {} : { listener: this.#context.listener }),
      idleMs: Math.round(now - this.#lastProgress),
      sentBytes: this.#mode === 'fixed' ? this.#total - this.#remaining - queued : -1,
      pendingBytes: this.#mode === 'fixed' ? queued : -1,
    });
    this.#aborted = true;
    this.#ended = true;
    this.#settle(); // first, so our abort handler stays quiet
    this.#res.close();
    this.body?.aborted();
    this.#abortCb?.();
  }

  /** The socket pushed back: bytes wait for the client, so the response is paced until they are taken. */
  #pushedBack(): void {
    this.#backpressured = true;
    if (this.#paced || this.#settled) return;
    this.#paced = true;
    this.#lastProgress = performance.now();
    pacer.add(this);
  }

  #unpace(): void {
    if (!this.#paced) return;
    this.#paced = false;
    pacer.delete(this);
  }

  #queuedBytes(): number {
    let n = 0;
    for (const c of this.#queue) n += c.byteLength;
    return n;
  }

  #complete(status: number, headers: HeaderList, body: Uint8Array | string | undefined, closeConnection: boolean): void {
    const plain = checkHead(status, headers);
    this.#ended = true;
    const res = this.#res;
    if (dispatching === res) this.#writeComplete(status, headers, body, closeConnection, plain);
    else res.cork(() => this.#writeComplete(status, headers, body, closeConnection, plain));
    this.#settle();
  }

  /** The whole response, inside a cork (`cork`, or uWS's own while it dispatches the request). */
  #writeComplete(status: number, headers: HeaderList, body: Uint8Array | string | undefined, closeConnection: boolean, plain: boolean): void {
    const res = this.#res;
    res.writeStatus(statusLine(status));
    if (this.#isHead || !bodyAllowed(status)) {
      const keepLength = lengthAllowed(status);
      writeHeaders(res, headers, keepLength, plain);
      if (keepLength && body !== undefined && headerValue(headers, 'content-length') === undefined) {
        res.writeHeader('content-length', String(bodyBytes(body)));
      }
      // uWS knows nothing of HEAD: end() would send the body plus its own Content-Length: 0, and
      // endWithoutBody(n) in this build waits for n body bytes that never come (the response
      // stays pending). endWithoutBody() with no argument writes neither length nor body.
      res.endWithoutBody();
    } else {
      const close = writeHeaders(res, headers, false, plain);
      res.end(body ?? '', closeConnection || close); // uWS writes Content-Length
    }
  }

  #writeFixed(chunk: Uint8Array | string): boolean {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    // Never send more than the declared length: the excess would be read as the next response.
    if (bytes.byteLength > this.#remaining) bytes = bytes.subarray(0, this.#remaining);
    this.#remaining -= bytes.byteLength;
    if (bytes.byteLength > 0) this.#queue.push(bytes);
    this.#res.cork(() => this.#flush());
    if (this.#queue.length === 0) return true;
    this.#pushedBack();
    return false;
  }

  /**
   * Hands queued bytes to tryEnd until the socket pushes back or the body is complete. tryEnd
   * writes without buffering (what the socket does not take stays in `#queue`) and, when the
   * socket pushes back, arms uWS's 10 s timeout; the pacer and writable events re-arm it.
   */
  #flush(): void {
    const res = this.#res;
    while (this.#queue.length > 0) {
      const chunk = this.#queue[0]!;
      const before = res.getWriteOffset();
      const [ok, done] = res.tryEnd(chunk, this.#total);
      if (done) {
        this.#queue.length = 0;
        this.#settle();
        // The last bytes went out after write() had said to wait, before the caller ended: its
        // writable callback is still owed, or its source stays paused short of its end for ever
        // (a file stream then holds its descriptor until the collector closes it).
        if (this.#backpressured && !this.#ended) {
          this.#backpressured = false;
          const cb = this.#writableCb;
          if (cb !== undefined) queueMicrotask(cb);
        }
        return;
      }
      if (!ok) {
        this.#queue[0] = chunk.subarray(res.getWriteOffset() - before);
        return;
      }
      this.#queue.shift();
    }
  }

  /** The caller ended a fixed-length body; if it fell short, only a closed connection tells the client. */
  #endFixed(): void {
    if (this.#settled) return;
    this.#settle(); // first, so our abort handler stays quiet
    if (this.#total === 0) this.#res.cork(() => this.#res.end(''));
    else this.#res.close();
  }

  /**
   * uWS's writable event (the socket took bytes: progress). While a handler is registered uWS does
   * not drain its own buffer, so this always corks: uncorking flushes the buffered bytes even when
   * nothing new is written.
   */
  readonly #writable = (): boolean => {
    if (this.#settled || this.#aborted) return true;
    this.#lastProgress = performance.now();
    this.#res.cork(() => {
      if (this.#mode === 'fixed') this.#flush();
      if (this.#settled) return;
      if (this.#endPending) {
        // A chunked response ended while backpressured: end it now; what uWS still holds is its
        // last bytes, which the kernel had room for a third of its buffer to take.
        this.#endPending = false;
        const chunk = this.#endChunk;
        this.#endChunk = undefined;
        this.#res.end(chunk ?? '');
        this.#settle();
        return;
      }
      if (this.#ended || this.#queue.length > 0 || !this.#backpressured) return;
      this.#backpressured = false;
      this.#unpace();
      this.#writableCb?.();
    });
    // A fixed-length body ended while bytes were queued finishes once they are out.
    if (this.#mode === 'fixed' && this.#ended && this.#queue.length === 0) this.#endFixed();
    return true;
  };

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#queue.length = 0;
    this.#endChunk = undefined;
    this.#unpace();
    this.#onSettled();
    const done = this.#bodyDone;
    this.#bodyDone = undefined;
    done?.();
  }
}
