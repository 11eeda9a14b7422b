/**
 * The lease that a store's write markers (`<prefix>/w/<id>`) are attached to, so they vanish by
 * themselves. A marker only has to outlive every attempt of its write that may still land (an
 * attempt waits at most etcd's request timeout, ~7 s): a lease lasts TTL_S and is used for
 * ROTATE_MS after its grant, so each marker lives at least a minute. Nothing keeps it alive.
 */
import { type EtcdLink } from './etcd-link';

const TTL_S = 90;
const ROTATE_MS = 30_000;

export class MarkerLease {
  readonly #link: EtcdLink;
  readonly #deadlineMs: number;
  #lease: { id: string; grantedAt: number } | null = null;
  #granting: Promise<string> | null = null;

  constructor(link: EtcdLink, deadlineMs: number) {
    this.#link = link;
    this.#deadlineMs = deadlineMs;
  }

  /** The lease id to attach markers to now (granted when none is young enough). */
  current(): Promise<string> {
    const l = this.#lease;
    if (l !== null && Date.now() - l.grantedAt < ROTATE_MS) return Promise.resolve(l.id);
    this.#granting ??= (async () => {
      const grantedAt = Date.now();
      try {
        const id = await this.#link.grantLease(TTL_S, this.#deadlineMs);
        this.#lease = { id, grantedAt };
        return id;
      } finally {
        this.#granting = null;
      }
    })();
    return this.#granting;
  }

  /** etcd no longer knows the lease (it expired early, or the cluster was restored): grant anew. */
  forget(id: string): void {
    if (this.#lease?.id === id) this.#lease = null;
  }
}
