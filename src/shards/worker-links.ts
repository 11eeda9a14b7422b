/**
 * A gateway thread's way to the shard workers (docs/config.md, `--gateway-threads`): one channel
 * per worker, made by the main thread's ShardClient (`linkClient`), so the gateway thread's calls
 * and their replies never pass through the main thread.
 *
 *   gateway thread k ──ShardClient.overLinks(PortLinks)──MessagePort──▶ shard worker w (client k)
 *           ▲                                                                │ replies, and the tail
 *           └────────────────────────────────────────────────────────────────┘ events of k's watches
 *
 * The main thread supervises the workers: it tells this side when one stops (its calls fail with
 * `storage_unavailable`) and hands over the new channel once it is restarted (the client then
 * watches its streams again, as the main thread's does).
 */
import { type MessagePort } from 'node:worker_threads';
import { type PoolHooks, type WorkerDown, type WorkerLinks, type WorkerPort } from './worker-pool';

export class PortLinks implements WorkerLinks {
  readonly size: number;
  readonly #ports: Array<MessagePort | null>;
  readonly #down: Array<WorkerDown | null>;
  #hooks: PoolHooks | null = null;

  /** `size` workers, none linked yet (each is down until its port arrives). */
  constructor(size: number) {
    this.size = size;
    this.#ports = Array.from({ length: size }, () => null);
    this.#down = Array.from({ length: size }, (_, w) => ({ worker: w, shards: [], error: 'not linked yet', errorCode: null, sinceMs: Date.now(), restarts: 0 }));
  }

  setHooks(h: PoolHooks): void {
    this.#hooks = h;
  }

  worker(w: number): WorkerPort | null {
    return this.#ports[w] ?? null;
  }

  downInfo(w: number): WorkerDown | null {
    return this.#down[w] ?? null;
  }

  unavailable(): WorkerDown[] {
    return this.#down.filter((d): d is WorkerDown => d !== null);
  }

  /** Worker `w`'s end of a new channel: at the start, and after a restart (then the client watches again). */
  linked(w: number, port: MessagePort): void {
    const again = this.#down[w]?.error !== 'not linked yet';
    this.#ports[w]?.close();
    this.#ports[w] = port;
    this.#down[w] = null;
    port.on('message', (m: unknown) => {
      if (this.#ports[w] === port) this.#hooks?.message(w, m);
    });
    if (again) this.#hooks?.up(w);
  }

  /** Worker `w` stopped: its calls fail at once until `linked` gives a new port. */
  down(w: number, why: WorkerDown): void {
    this.#ports[w]?.close();
    this.#ports[w] = null;
    this.#down[w] = why;
    this.#hooks?.down(w, why);
  }

  /** Close every channel (the thread is stopping). */
  close(): void {
    for (const p of this.#ports) p?.close();
    this.#ports.fill(null);
  }
}
