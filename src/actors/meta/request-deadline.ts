/**
 * The bound on a request's wait for the metadata store. A store write or sync keeps trying for
 * up to 10 s (etcd: member failover, an election), far longer than a client waits for an answer;
 * with etcd's quorum lost it never succeeds at all. A request that needs the store on its path (a
 * placement lookup or write, a token check) waits at most REQUEST_METADATA_MS and is then
 * answered `storage_unavailable` (503 with Retry-After on HTTP; each Kafka API its retriable
 * code), so a client learns within its own deadline to try again (docs/cluster.md, "When etcd
 * loses its quorum").
 *
 * The store's work is not cancelled: a write may still land after the answer (a placement row
 * `opening` with no stream yet), which is why only idempotent steps (a create-only row, a read
 * index) go through here: the client's retry finds what landed and goes on from it.
 */
import { SvcError } from '../../errors';

/** How long a request waits for the metadata store (ms): well inside the 5 s clients give a create. */
export const REQUEST_METADATA_MS = 3_000;

/** `work`, or storage_unavailable once `ms` passed without its answer (its own failure is passed on). */
export function withinRequestDeadline<T>(work: Promise<T>, what: string, ms = REQUEST_METADATA_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SvcError('storage_unavailable', `the metadata store did not answer ${what} within ${ms} ms (etcd unreachable or without quorum); try again`)), ms);
  });
  // Its rejection after the deadline has no listener left: observed here, so it is not unhandled.
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
