/**
 * A graceful stop's handoff (docs/cluster.md, "Graceful stop"): in objects mode a stopping node
 * moves every stream placed on it to the other live nodes first, as transfers, while it still
 * answers (307 to the new owner), and only then drains and releases its liveness lease.
 *
 *   SIGTERM ──▶ every row {nodeId: me, placed} ──▶ target = the other live node with the fewest
 *               streams (of its topic, then in all) per slot (failover's choice, balance.ts)
 *               ──▶ CAS {nodeId: B, epoch: e + 1, opening, from: me}
 *           ──▶ wait until each is placed there (bounded) ──▶ the node's usual close (drain, lease revoked)
 *
 * Without this the stopping node held its lease through its drain: its streams answered 503
 * `shutting_down` for the whole shutdown before the lease holder failed them over. A row that
 * changed meanwhile (another transfer, a delete) is left to whoever changed it; a stream not placed
 * elsewhere within the wait is failed over once the lease is gone, as before.
 */
import { type Logger } from '../../log';
import { MetaConflictError } from '../meta/meta-store';
import { type Membership } from './membership';
import { type Placement, isMoving } from './placement';

const POLL_MS = 20;
/** How long the stop waits for its `stopping` mark to be written (ms). */
const MARK_WAIT_MS = 1_000;

/** Move this node's streams to the other live nodes and wait up to `waitMs` for them to be placed there. */
export async function handOffStreams(placement: Placement, members: Membership, log: Logger, waitMs: number): Promise<{ moved: number; placed: number }> {
  const me = placement.nodeId;
  // First the mark: no rebalance or new stream sends anything back here while the node stops.
  // Bounded: with etcd away the stop goes on without it (the moves below fail over as before).
  const marked = members.markStopping().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'marking this node stopping failed; handing its streams off anyway'));
  await Promise.race([marked, new Promise((r) => setTimeout(r, Math.min(MARK_WAIT_MS, waitMs)).unref())]);
  const others = members.placeableNodes().filter((n) => n.nodeId !== me);
  if (others.length === 0) return { moved: 0, placed: 0 };
  const targets = others.some((n) => n.slots > 0) ? others : others.map((n) => ({ ...n, slots: 1 }));
  const moved: string[] = [];
  await Promise.all(
    placement
      .rows()
      .filter(({ row }) => row.nodeId === me && row.state === 'placed' && row.remove !== true)
      .map(async ({ name, row, version }) => {
        const to = placement.chooseAmong(name, targets, row.kafkaTopic ?? null);
        if (to === null) return;
        try {
          await placement.reserve(to, null, () => placement.move(name, { row, version }, to));
          moved.push(name);
        } catch (err) {
          if (!(err instanceof MetaConflictError)) log.warn({ stream: name, err: (err as Error).message }, 'handing a stream off before stopping failed; it fails over once this node is gone');
        }
      }),
  );
  const opening = (): number => moved.filter((name) => {
    const cur = placement.row(name);
    return cur !== null && isMoving(cur.row) && cur.row.from === me;
  }).length;
  const end = Date.now() + waitMs;
  while (opening() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, POLL_MS));
  const placed = moved.length - opening();
  log.info({ moved: moved.length, placed }, 'handed this node\'s streams off to the other live nodes before stopping');
  return { moved: moved.length, placed };
}
