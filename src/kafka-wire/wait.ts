/**
 * A Fetch with nothing to return waits (up to MaxWaitMs) for any of its partitions' tails to pass
 * the position it asked for, on the live-read registry the HTTP long-polls use: waiting costs no
 * shard work, and the node's shutdown ends the wait at once.
 */
import type { StreamWatch } from '../gateway';
import { type LiveRegistry, type TailWaiter } from './context';

export interface WaitTarget {
  /** Stream name. */
  name: string;
  /** The next seq the fetch wants. */
  seq: number;
  /** The stream read (a tail of another id means it was deleted). */
  streamId: number;
}

/** Resolves when a target's tail passes its seq, after `ms`, or at shutdown, whichever comes first. */
export function waitForAny(live: LiveRegistry, targets: readonly WaitTarget[], ms: number): Promise<void> {
  if (live.closed || targets.length === 0 || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    let done = false;
    const held: Array<{ watch: StreamWatch; waiter: TailWaiter }> = [];
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const h of held) {
        live.cancel(h.watch, h.waiter);
        live.leave(h.watch);
      }
      live.remove(reader);
      resolve();
    };
    const reader = { shutdown: finish };
    const timer = setTimeout(finish, ms);
    live.add(reader);
    for (const t of targets) {
      if (done) break;
      const watch = live.join(t.name);
      // Woken by the high watermark: a read_committed fetch bounds itself by the last stable offset.
      const waiter: TailWaiter = { seq: t.seq, streamId: t.streamId, wake: finish, uncommitted: true };
      held.push({ watch, waiter });
      live.wait(watch, waiter); // may call finish at once
    }
  });
}
