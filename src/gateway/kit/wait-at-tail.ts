/**
 * A live read waiting at a stream's tail: the long-poll waiter (LongPoll) and the loop that waits,
 * reads and answers (waitAtTail). Shared by the Svc and Durable Streams long-polls and the Durable
 * Streams SSE response (live-waiters.ts has the registry they wait in).
 */
import { type HttpResponse } from '../http/engine';
import { type LiveReader, type LiveWaiters, type StreamWatch, type Waiter } from './live-waiters';

export type Outcome = 'due' | 'timeout' | 'shutdown' | 'aborted';

/**
 * Wait on stream `name`'s watch at `at` (the reader's next seq) until `due` — called each time the
 * tail passes `at` — returns an answer, the long-poll timeout passes, the node shuts down or the
 * client leaves. Shared by the Svc and Durable Streams long-polls.
 */
export async function waitAtTail<T>(
  live: LiveWaiters,
  name: string,
  at: number,
  streamId: number,
  res: HttpResponse,
  due: (watch: StreamWatch) => Promise<T | null>,
): Promise<T | Exclude<Outcome, 'due'>> {
  const poll = new LongPoll(at, streamId);
  const watch = live.join(name);
  live.add(poll);
  res.onAborted(() => poll.settle('aborted'));
  const timer = setTimeout(() => poll.settle('timeout'), live.longPollTimeoutMs);
  try {
    for (;;) {
      const outcome = poll.next();
      live.wait(watch, poll); // may wake the poll at once
      const o = await outcome;
      live.cancel(watch, poll);
      if (o !== 'due') return o;
      const r = await due(watch);
      if (r !== null) return r;
    }
  } finally {
    clearTimeout(timer);
    live.remove(poll);
    live.leave(watch);
  }
}

/** One waiting long-poll: a Waiter for the registry, settled by a wake, its timer, an abort or shutdown. */
export class LongPoll implements Waiter, LiveReader {
  readonly kind = 'long_poll';
  readonly seq: number;
  readonly streamId: number;
  #resolve: ((o: Outcome) => void) | null = null;
  /** Time-out, abort and shutdown end the poll for good; a wake only ends one wait. */
  #final: Outcome | null = null;

  constructor(seq: number, streamId: number) {
    this.seq = seq;
    this.streamId = streamId;
  }

  next(): Promise<Outcome> {
    if (this.#final !== null) return Promise.resolve(this.#final);
    return new Promise((resolve) => (this.#resolve = resolve));
  }

  settle(o: Outcome): void {
    if (o !== 'due') this.#final ??= o;
    const resolve = this.#resolve;
    this.#resolve = null;
    resolve?.(o);
  }

  wake(): void {
    this.settle('due');
  }

  shutdown(): void {
    this.settle('shutdown');
  }
}
