/**
 * I/O threads for the uWS engine (`--sse-threads`, docs/config.md; perf/README.md "W6"): a
 * listener's socket reads and writes move to threads of their own, its handlers stay on the main
 * thread.
 *
 *   client ──TCP──▶ kernel (SO_REUSEPORT: each new connection to one of the I/O threads' apps)
 *                     └─▶ I/O thread k's uWS app ──requests (one message a turn)──▶ handler (main thread)
 *                              ▲                                                   │ RemoteResponse
 *                              └──── response operations, one message a turn ◀─────┘
 *
 * Why: a write to a socket costs a system call (6–20 µs on loopback on the 2-core reference
 * machine), paid once per reader per delivery; 10,000 SSE readers on one thread hold it for
 * 60–200 ms per tail move, and that pass is the fan-out's latency. The main thread renders each
 * page once and decides who gets what; an SSE event for all the readers on a thread crosses once
 * per turn (io-wire.ts) and the thread does the writes. With threads, the main thread's app does
 * not listen: every write is a thread's, and the main thread keeps only the handlers and the
 * fan-out's bookkeeping (~2.5 µs per delivery against ~12 µs with its own writes, perf/RESULTS.md).
 */
import * as net from 'node:net';
import path from 'node:path';
import * as v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { type HttpEngine, type HttpRequest, type HttpServerHandle, type ListenOptions, type RequestHandler } from './engine';
import { type ControlMessage, type EventsMessage, OpBatch, type ThreadStatus } from './io-wire';
import { OpenResponses } from './open-responses';
import { RemoteResponse } from './remote-response';
import { listenError } from './listen-errors';
import { runHandler } from './run-handler';
import { type EngineLog, logCut } from './write-pacing';

/** The uWS engine with `options.threads` honoured; without threads it is `base` unchanged. `log` gets the threads' cuts. */
export function withIoThreads(base: HttpEngine, log: EngineLog): HttpEngine {
  return {
    name: base.name,
    async listen(options, handler) {
      const threads = options.threads ?? 0;
      if (threads <= 0) return base.listen(options, handler);
      // The threads' apps are plain HTTP and hand bodies over whole (io-thread.ts).
      if (options.tls !== undefined || options.streamBodies === true) throw new Error('I/O threads serve neither TLS nor streamed request bodies');
      // The threads' apps share the port with SO_REUSEPORT, which would let another process's
      // SO_REUSEPORT socket share it too (the kernel would split the clients between the two).
      // So the port is first bound here without it (node:net never sets it): that fails on a port
      // any other socket listens on, and the threads bind only a port found free. For port 0 the
      // probe finds the free port (uSockets sets SO_REUSEPORT only on a given port); another
      // process may take it before the threads bind it, and then a new port is tried.
      // (README.md, "One process per port": the window between probe and bind.)
      for (let attempt = 1; ; attempt++) {
        const port = await freePort(options);
        try {
          return await listenAll({ ...options, port }, handler, threads, log);
        } catch (err) {
          if (options.port !== 0 || attempt >= PORT_ATTEMPTS) throw err;
        }
      }
    },
  };
}

/** `options.port` if no other socket listens on it (else the listener's error), or a free port for port 0. */
function freePort(options: ListenOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err) => reject(listenError(options, err)));
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** Tries for a free port when the listener asked for port 0. */
const PORT_ATTEMPTS = 5;

/**
 * The I/O threads alone take the listener's connections: the main thread's app does not listen,
 * so every socket write happens on a thread, and the main thread keeps the handlers and the
 * fan-out's bookkeeping (perf/README.md, "W6": how this scales with cores).
 */
async function listenAll(options: ListenOptions, handler: RequestHandler, threads: number, log: EngineLog): Promise<HttpServerHandle> {
  const started: IoThread[] = [];
  const young = options.gateway?.youngGenerationMb;
  // A worker's young generation can only be capped (resourceLimits); its floor is V8's
  // process-wide flag, read when an isolate is made: set while these threads start (each has
  // made its isolate by the time it listens), then back to V8's default for later workers.
  if (young !== undefined) v8.setFlagsFromString(`--min-semi-space-size=${Math.floor(young / 3)}`);
  try {
    for (let i = 0; i < threads; i++) started.push(await IoThread.start(options, handler, log, i));
  } catch (err) {
    await Promise.all(started.map((t) => t.close()));
    throw err;
  } finally {
    if (young !== undefined) v8.setFlagsFromString('--min-semi-space-size=0');
  }
  return new ThreadedServer(options.port, started);
}

class ThreadedServer implements HttpServerHandle {
  readonly port: number;
  readonly #threads: IoThread[];

  constructor(port: number, threads: IoThread[]) {
    this.#threads = threads;
    this.port = port;
  }

  stopAccepting(): void {
    for (const t of this.#threads) t.stopAccepting();
  }

  async close(): Promise<void> {
    this.stopAccepting();
    await Promise.all(this.#threads.map((t) => t.close()));
  }
}

/** One I/O thread as the main thread sees it: its open responses and this turn's batch for it. */
class IoThread {
  readonly #worker: Worker;
  readonly #options: ListenOptions;
  readonly #handler: RequestHandler;
  readonly #responses = new Map<number, RemoteResponse>();
  readonly #inFlight = new OpenResponses();
  #batch = new OpBatch();
  #flushing = false;
  #closed: Promise<void> | null = null;
  #exited = false;
  /** Where the thread's cuts are logged (they come with its events). */
  readonly #log: EngineLog;

  private constructor(worker: Worker, options: ListenOptions, handler: RequestHandler, log: EngineLog) {
    this.#log = log;
    this.#worker = worker;
    this.#options = options;
    this.#handler = handler;
  }

  static start(options: ListenOptions, handler: RequestHandler, log: EngineLog, k: number): Promise<IoThread> {
    // A gateway thread (--gateway-threads) also gets its handler's module, data and control channel.
    const g = options.gateway === undefined ? undefined : { module: options.gateway.module, ...options.gateway.start(k) };
    const young = options.gateway?.youngGenerationMb;
    const worker = new Worker(path.join(__dirname, 'io-thread.js'), {
      ...(young === undefined ? {} : { resourceLimits: { maxYoungGenerationSizeMb: young } }),
      workerData: { host: options.host, port: options.port, bodyLimit: options.bodyLimit, name: options.name, writeIdleMs: options.writeIdleMs, gateway: g },
      transferList: g === undefined ? [] : [g.port],
    });
    const t = new IoThread(worker, options, handler, log);
    return new Promise((resolve, reject) => {
      const onStatus = (m: ThreadStatus | EventsMessage): void => {
        if (m.t === 'listening') {
          worker.off('error', reject);
          // An error event with no listener would end the process; a failed thread ends only its
          // own connections (their responses are aborted on exit, below), and the kernel sends
          // new ones to the threads still listening.
          worker.on('error', (err) => {
            if (t.#closed === null) process.emitWarning(`an HTTP I/O thread failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, { code: 'SVC_IO_THREAD_FAILED' });
          });
          worker.on('message', (e: EventsMessage | ThreadStatus) => t.#onMessage(e));
          resolve(t);
        } else if (m.t === 'listen-failed') {
          void worker.terminate();
          reject(new Error(m.message));
        } else {
          return;
        }
        worker.off('message', onStatus);
      };
      worker.on('message', onStatus);
      worker.once('error', reject);
      worker.once('exit', () => {
        t.#exited = true;
        // A thread that is gone takes its connections with it: their responses are aborted.
        for (const r of [...t.#responses.values()]) r.abortedByPeer();
        t.#responses.clear();
      });
    });
  }

  stopAccepting(): void {
    this.#post({ t: 'stop-accepting' });
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.stopAccepting();
      await this.#inFlight.idle();
      this.#flush();
      if (this.#exited) return;
      const closed = new Promise<void>((resolve) => {
        this.#worker.on('message', (m: ThreadStatus) => m.t === 'closed' && resolve());
        this.#worker.once('exit', () => resolve());
      });
      this.#post({ t: 'close' });
      await closed;
      await this.#worker.terminate();
    })();
    return this.#closed;
  }

  /** This turn's operations for the thread, posted when the turn's work is done. */
  batch(): OpBatch {
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => this.#flush());
    }
    return this.#batch;
  }

  #flush(): void {
    this.#flushing = false;
    if (this.#batch.empty || this.#exited) return;
    const m = this.#batch.take();
    this.#worker.postMessage(m, [m.data]);
  }

  #post(m: ControlMessage): void {
    if (!this.#exited) this.#worker.postMessage(m);
  }

  #open(id: number): RemoteResponse {
    const settle = this.#inFlight.add();
    const r = new RemoteResponse(id, this, () => {
      this.#responses.delete(id);
      settle();
    });
    this.#responses.set(id, r);
    return r;
  }

  #onMessage(m: EventsMessage | ThreadStatus): void {
    if (m.t !== 'events') return;
    for (const cut of m.cuts) logCut(this.#log, cut);
    for (const id of m.aborted) this.#responses.get(id)?.abortedByPeer();
    for (const id of m.blocked) this.#responses.get(id)?.blockedByPeer();
    for (const id of m.writable) this.#responses.get(id)?.writableAgain();
    for (const { id, head } of m.tooLarge) this.#open(id).refuse(this.#options.tooLarge({ ...head, headers: bare(head.headers) }));
    for (const { id, head, body } of m.requests) {
      // A literal, not a spread (engine.ts, requestOf): one hidden class for every request.
      const req: HttpRequest = { method: head.method, path: head.path, query: head.query, headers: bare(head.headers), body: Buffer.from(body) };
      runHandler(this.#handler, req, this.#open(id));
    }
  }
}

/**
 * Headers without a prototype again, as the engine gives them (a header called `constructor` is
 * just a header, and an absent one is undefined): the structured clone made them plain objects.
 */
function bare(headers: Record<string, string>): Record<string, string> {
  return Object.assign(Object.create(null) as Record<string, string>, headers);
}
