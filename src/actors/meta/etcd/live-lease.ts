/**
 * The lease a node's liveness record (`live/<nodeId>`, docs/cluster.md) is attached to: granted
 * with `ttlSeconds`, kept alive every third of it, revoked on a clean stop so the record vanishes
 * from every node's view at once. If etcd forgot the lease (the node was cut off longer than the
 * TTL, so its record expired and other nodes saw it die), a new lease is granted and the record
 * written again through `rewrite`; `onLost` is told so the node can say it was unregistered.
 */
import { type Logger } from '../../../log';
import { type EtcdLink } from './etcd-link';

export class LiveLease {
  readonly #link: EtcdLink;
  readonly #ttlSeconds: number;
  readonly #deadlineMs: number;
  readonly #log: Logger | null;
  #id: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Writes the record again under the lease named (after a lease was lost). */
  #rewrite: ((lease: string) => Promise<void>) | null = null;
  /** Renewals failed in a row (0 after one that etcd answered). */
  #failures = 0;
  /** Told when the lease was found expired (true) and when the record is back (false). */
  onLost: ((lost: boolean) => void) | null = null;

  constructor(link: EtcdLink, ttlSeconds: number, deadlineMs: number, log: Logger | null) {
    this.#link = link;
    this.#ttlSeconds = ttlSeconds;
    this.#deadlineMs = deadlineMs;
    this.#log = log;
  }

  /** The lease to attach the record to (granted on first call). */
  async id(): Promise<string> {
    this.#id ??= await this.#link.grantLease(this.#ttlSeconds, this.#deadlineMs);
    return this.#id;
  }

  /** Start renewing; `rewrite` puts the record again when the lease had to be granted anew. */
  start(rewrite: (lease: string) => Promise<void>): void {
    this.#rewrite = rewrite;
    this.#schedule();
  }

  /**
   * etcd answered one of the last two renewals. A renewal needs etcd's leader, so two failures
   * in a row (about 2–4 s) mean no quorum is reachable and no write can succeed: the node says
   * it is not ready (`/ready` 503) until a renewal is answered again. One failure alone (a member
   * lost, an election, a slow turn on a busy machine) does not.
   */
  get reachable(): boolean {
    return this.#failures < 2;
  }

  #schedule(): void {
    if (this.#stopped) return;
    // After a failure the next renewal comes sooner: the lease is kept, and reachability is known, earlier.
    const every = (this.#ttlSeconds * 1000) / 3;
    this.#timer = setTimeout(() => void this.#renew(), Math.max(200, this.#failures > 0 ? Math.min(500, every) : every));
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    try {
      const id = await this.id();
      const ttl = await this.#link.keepAliveOnce(id, Math.min(this.#deadlineMs, (this.#ttlSeconds * 1000) / 3));
      if (ttl <= 0 && !this.#stopped) {
        // etcd no longer knows it: the record expired. Register again under a new lease.
        this.#log?.error({ lease: id }, 'the node liveness lease expired; registering again');
        this.onLost?.(true);
        this.#id = null;
        await this.#rewrite?.(await this.id());
        this.onLost?.(false);
      }
      this.#failures = 0;
    } catch (err) {
      this.#failures++;
      this.#log?.warn({ err: (err as Error).message }, 'renewing the node liveness lease failed; trying again');
    } finally {
      this.#schedule();
    }
  }

  /** Stop renewing and revoke the lease (its record is deleted at once). Never throws. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const id = this.#id;
    this.#id = null;
    if (id === null) return;
    await this.#link.revokeLease(id, 2_000).catch((err: unknown) => {
      this.#log?.warn({ err: (err as Error).message }, 'revoking the node liveness lease failed; it expires by itself');
    });
  }
}
