import { type MessagePort } from 'node:worker_threads';
/**
 * The contract every HTTP engine adapter fulfils. The gateway's handlers see only
 * these types, so the protocol code runs unchanged on uWebSockets.js and node:http.
 *
 * Rules the adapters guarantee:
 * - `handler` is called once per request, after the whole body has been read
 *   (bodies over `bodyLimit` are refused by the adapter with the `tooLarge` response
 *   the gateway supplies, before the handler runs). With `streamBodies` (svc-cache: uploads
 *   of any size go on to the origin as they arrive) it is called once the head is read, and
 *   the body comes through `bodyStream` instead.
 * - Header names are lower-case. `path` is the raw (still percent-encoded) path,
 *   `query` the raw query string without the leading `?`.
 * - A response may be completed asynchronously; writing to an aborted response is a no-op.
 * - A response whose headers hold `connection: close` closes the connection after it.
 */
import { type Readable } from 'node:stream';

export interface HttpRequest {
  /** Upper-case method, e.g. `GET`. */
  readonly method: string;
  /** Raw path, percent-encoding preserved, query removed. */
  readonly path: string;
  /** Raw query string without `?` (empty string when absent). */
  readonly query: string;
  /** Lower-case header name → value (repeated headers joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The request body (zero-length when none was sent, and always with `streamBodies`). */
  readonly body: Buffer;
  /**
   * With `streamBodies` only: the body as it arrives, with backpressure (a paused stream stops
   * reading the socket), or null when the request declared none. Absent otherwise.
   */
  readonly bodyStream?: RequestBody | null;
  /**
   * With `streamBodies` only: the client sent `Expect: 100-continue` and waits for
   * `HttpResponse.writeContinue()` (node:http), or has had its 100 from the engine already (uWS
   * answers it by itself as the head arrives).
   */
  readonly expectContinue?: boolean;
}

/**
 * The request a handler gets, built as an object literal. `{ ...head, body }` gives every request
 * a hidden class of its own in this V8 (a new map and descriptor array per request, checked with
 * `%HaveSameMap`), which costs an allocation per request, memory for as long as a live read waits,
 * and turns every access to a request's fields megamorphic.
 */
export function requestOf(head: Omit<HttpRequest, 'body'>, body: Buffer): HttpRequest {
  return { method: head.method, path: head.path, query: head.query, headers: head.headers, body };
}

/** With `streamBodies`: the request with its body stream (one literal shape too, see requestOf). */
export function streamedRequestOf(head: Omit<HttpRequest, 'body'>, body: Buffer, bodyStream: RequestBody | null, expectContinue: boolean): HttpRequest {
  return { method: head.method, path: head.path, query: head.query, headers: head.headers, body, bodyStream, expectContinue };
}

/** A streamed request body; `complete` once its last byte was read (false when it was cut). */
export type RequestBody = Readable & { readonly complete: boolean };

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/** Called when the engine has finished with a response body (HttpResponse.send). */
export type BodyDone = () => void;

/**
 * A complete response's body: bytes, text, or parts sent one after another as one body (a read
 * page made of views of a shard worker's read cache, ReadResult.parts), never joined by an engine
 * that can write them as they are.
 */
export type ResponseBody = Uint8Array | string | readonly Uint8Array[];

/** `body` as one buffer or string: parts joined (for a sink that takes one, or a body too small to send in parts). */
export function wholeBody(body: ResponseBody): Uint8Array | string;
export function wholeBody(body: ResponseBody | undefined): Uint8Array | string | undefined;
export function wholeBody(body: ResponseBody | undefined): Uint8Array | string | undefined {
  return isParts(body) ? Buffer.concat(body) : body;
}

/** Whether `body` is parts. */
export function isParts(body: ResponseBody | undefined): body is readonly Uint8Array[] {
  return Array.isArray(body);
}

/** `headers` with Content-Length `bytes` in place of any the caller gave (a body's own length). */
export function withLength(headers: HeaderList, bytes: number): HeaderList {
  return [...headers.filter(([name]) => name.toLowerCase() !== 'content-length'), ['content-length', String(bytes)]];
}

/** Bytes of `body`. */
export function bodyBytes(body: ResponseBody): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (!isParts(body)) return body.byteLength;
  let n = 0;
  for (const p of body) n += p.byteLength;
  return n;
}

export interface HttpResponse {
  /** True once the client has gone away; further writes are ignored. */
  readonly aborted: boolean;
  /** True once a status line is committed (send, refuse or writeHead): a second one cannot follow. */
  readonly sent: boolean;
  /** Called once if the client goes away before the response ends. */
  onAborted(cb: () => void): void;
  /**
   * Send a complete response. `done`, when given, is called once, when the engine will never read
   * `body` again and holds no reference to it: every byte went to the socket (or was copied), the
   * client went away and the engine dropped the rest, or nothing was sent at all. An engine that
   * cannot know that (node:http's socket may still hold bytes of a client that left) never calls
   * it, and the body is left to the garbage collector. A caller reuses the body's memory only
   * after `done` (a read page's buffer goes back to its shard worker, ShardClient.recycle).
   */
  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void;
  /** Start a streamed response (server-sent events, long bodies). */
  writeHead(status: number, headers: HeaderList): void;
  /** Write a chunk of a streamed response; false when the client is not keeping up (backpressure). */
  write(chunk: Uint8Array | string): boolean;
  /**
   * Send `100 Continue` to a client that asked for it (`expectContinue`): after its request was
   * accepted, so a refused upload is never sent. A no-op where the engine has sent it already.
   */
  writeContinue?(): void;
  /** Called when a backpressured response can take more data. */
  onWritable(cb: () => void): void;
  /** End a streamed response. */
  end(chunk?: Uint8Array | string): void;
  /**
   * Close the connection now, dropping bytes the engine still holds: for a streamed response whose
   * client stopped reading (a slow SSE reader, shutdown). Not an abort: `onAborted` does not fire.
   * A no-op once the response has ended or the client has gone.
   */
  destroy(): void;
}

/**
 * A handler may finish asynchronously and return its promise: the engine (run-handler.ts) and the
 * gateway's shield turn a rejection, like a synchronous throw, into an error reply; nothing a
 * handler does can become an unhandled rejection that ends the process.
 */
export type RequestHandler = (req: HttpRequest, res: HttpResponse) => void | Promise<unknown>;

/** What makes an I/O thread a gateway thread (ListenOptions.gateway). */
export interface GatewayThreadSpec {
  /** The file the thread loads; it exports `startGateway(data, port): Promise<LocalGateway>`. */
  module: string;
  /** Thread k's data (structured-cloned) and its end of a control channel (moved). */
  start(thread: number): { data: unknown; port: MessagePort };
  /**
   * V8's young generation of each thread, in MiB: it starts at this size and stays there (a
   * third of it per semi-space, V8's split); absent: Node's default for a worker thread, which
   * starts small, grows and shrinks.
   */
  youngGenerationMb?: number;
}

/** A gateway thread's own handler (GatewayThreadSpec.module's `startGateway`). */
export interface LocalGateway {
  /** Whether this thread answers `req` itself; if not, it goes to the listener's handler on the main thread. */
  serves(req: Omit<HttpRequest, 'body'>): boolean;
  handler: RequestHandler;
}

export interface ListenOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** The response for a body over `bodyLimit` (status, headers, body) — in the protocol's own error shape. */
  tooLarge: (req: Omit<HttpRequest, 'body'>) => { status: number; headers: HeaderList; body: string };
  /**
   * Threads beside the calling one that take a share of the listener's connections and do their
   * socket reads and writes (uWS only; `--sse-threads`, gateway/http/io-threads.ts). Handlers
   * still run on the calling thread. 0 or absent: none.
   */
  threads?: number;
  /**
   * With `threads`: each thread is a gateway thread (`--gateway-threads`, io-threads.ts): it loads
   * `module` and serves itself the requests that module's handler takes; the others still come to
   * the calling thread's handler. `start(k)` gives thread k its data and its control channel.
   */
  gateway?: GatewayThreadSpec;
  /** Call the handler at the end of the head and stream the body (`HttpRequest.bodyStream`); `bodyLimit` does not apply. */
  streamBodies?: boolean;
  /** Serve HTTPS with this certificate chain and key (PEM file paths). Not with `threads`. */
  tls?: { cert: string; key: string };
  /** What the listener is called in errors and logs (`protocol listener`, `admin listener`, …). */
  name?: string;
  /**
   * A response whose client takes no byte of it for this long is cut and logged (README.md, "Write
   * pacing and the idle timeout"). Default WRITE_IDLE_MS (60 s); a client that reads, however
   * slowly, is never cut.
   */
  writeIdleMs?: number;
}

export interface HttpServerHandle {
  /** The port actually bound. */
  readonly port: number;
  /** Stop accepting new connections; in-flight requests continue. */
  stopAccepting(): void;
  /** Close every connection (after in-flight work has finished). */
  close(): Promise<void>;
}

export interface HttpEngine {
  readonly name: 'uws' | 'node';
  listen(options: ListenOptions, handler: RequestHandler): Promise<HttpServerHandle>;
}
