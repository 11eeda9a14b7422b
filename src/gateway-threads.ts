/**
 * The main thread's side of the gateway threads (`--gateway-threads`, docs/config.md;
 * gateway-thread.ts is the threads' side). The Svc listener's uWS threads each load
 * gateway-thread.js; this gives each one its data and a control channel, links its ShardClient to
 * every shard worker (and again after a worker restarts), sends it every token record after each
 * change and waits for its acknowledgement, and drains it at shutdown before the workers close.
 */
import * as path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { type Tokens } from './actors';
import { type GatewayThreadData, type FromGateway, type ToGateway } from './gateway-thread';
import { type GatewayThreadSpec } from './program/http/engine';
import { type ShardClient } from './shards';

/**
 * V8's young generation of a gateway thread: as large as the main thread's (16 MiB semi-spaces)
 * instead of a worker's default. With the default, a thread serving appends page-faulted about
 * 0.7 times per request as V8 kept giving its new-space pages back and taking fresh ones, and
 * collected more often (more short-lived request objects promoted): ~10 µs of CPU per append the
 * main thread did not spend (perf/README.md, "Gateway threads"). Costs up to 48 MiB per thread.
 */
const GATEWAY_YOUNG_GENERATION_MB = 48; // MiB

interface Thread {
  port: MessagePort;
  unlink(): void;
}

export class GatewayThreads {
  readonly #shards: ShardClient;
  readonly #tokens: Tokens | null;
  readonly #data: Omit<GatewayThreadData, 'threadName'>;
  readonly #threads: Thread[] = [];
  readonly #acks = new Map<number, { left: number; done: () => void }>();
  #nextId = 1;

  /** `tokens` null: auth is off, the threads check nothing. */
  constructor(shards: ShardClient, tokens: Tokens | null, data: Omit<GatewayThreadData, 'threadName'>) {
    this.#shards = shards;
    this.#tokens = tokens;
    this.#data = data;
    // A token issued or revoked is answered only once every thread has the new records.
    tokens?.onChange(() => this.#toAll((id) => ({ t: 'tokens', id, records: tokens.records() })));
  }

  /** What the listener's engine needs to start the threads (ListenOptions.gateway). */
  spec(): GatewayThreadSpec {
    return { module: path.join(__dirname, 'gateway-thread.js'), start: (k) => this.#start(k), youngGenerationMb: GATEWAY_YOUNG_GENERATION_MB };
  }

  #start(k: number): { data: unknown; port: MessagePort } {
    const { port1, port2 } = new MessageChannel();
    const post = (m: ToGateway, transfer: MessagePort[] = []): void => port1.postMessage(m, transfer);
    const { unlink } = this.#shards.linkClient({
      port: (w, p) => post({ t: 'linked', w, port: p }, [p]),
      down: (w, why) => post({ t: 'down', w, why }),
    });
    if (this.#tokens !== null) post({ t: 'tokens', id: 0, records: this.#tokens.records() });
    post({ t: 'started' });
    port1.on('message', (m: FromGateway) => {
      const a = this.#acks.get(m.id);
      if (a === undefined || --a.left > 0) return;
      this.#acks.delete(m.id);
      a.done();
    });
    // The main thread's own work must not wait on this channel to let the process exit.
    port1.unref();
    this.#threads.push({ port: port1, unlink });
    return { data: { ...this.#data, threadName: `svc-gw-${k + 1}` } satisfies GatewayThreadData, port: port2 };
  }

  /** New requests on every thread are refused, live reads answered, in-flight ones finished; then the threads' channels to the workers close. */
  async drain(): Promise<void> {
    await this.#toAll((id) => ({ t: 'drain', id }));
    for (const t of this.#threads) t.unlink();
  }

  /** One message to every thread; resolves once each acknowledged it. */
  #toAll(make: (id: number) => ToGateway): Promise<void> {
    if (this.#threads.length === 0) return Promise.resolve();
    const id = this.#nextId++;
    return new Promise<void>((resolve) => {
      this.#acks.set(id, { left: this.#threads.length, done: resolve });
      for (const t of this.#threads) t.port.postMessage(make(id));
    });
  }
}
