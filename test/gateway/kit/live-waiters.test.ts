/**
 * The live-read registry on its own (src/gateway/kit/live-waiters.ts), against a fake data plane:
 * when streams are watched and unwatched, which tail events wake whom, and that waiters at one
 * position share one read.
 */
import { type ReadParams, type ReadResult, type TailEvent } from '../../../src/shards';
import { LiveWaiters, type Waiter } from '../../../src/gateway/kit/live-waiters';

class FakeShards {
  watched: string[] = [];
  unwatched: string[] = [];
  reads: ReadParams[] = [];
  listener: (events: TailEvent[]) => void = () => undefined;
  #watchReplies: Array<(t: TailEvent) => void> = [];
  #readReplies: Array<(r: ReadResult) => void> = [];

  watch(name: string): Promise<TailEvent> {
    this.watched.push(name);
    return new Promise((resolve) => this.#watchReplies.push(resolve));
  }
  unwatch(name: string): Promise<void> {
    this.unwatched.push(name);
    return Promise.resolve();
  }
  read(p: ReadParams): Promise<ReadResult> {
    this.reads.push(p);
    return new Promise((resolve) => this.#readReplies.push(resolve));
  }
  onTail(listener: (events: TailEvent[]) => void): void {
    this.listener = listener;
  }
  answerWatch(t: TailEvent): void {
    this.#watchReplies.shift()!(t);
  }
  answerReads(r: ReadResult): void {
    for (const resolve of this.#readReplies.splice(0)) resolve(r);
  }
}

const tail = (over: Partial<TailEvent>): TailEvent => ({ name: '/s', streamId: 7, nextSeq: 0, closed: false, deleted: false, bytes: 0, version: 1, ...over });
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function waiter(seq: number, streamId = 7): Waiter & { woken: number } {
  const w = { seq, streamId, woken: 0, wake: () => void w.woken++ };
  return w;
}

describe('LiveWaiters', () => {
  let shards: FakeShards;
  let live: LiveWaiters;
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    shards = new FakeShards();
    live = new LiveWaiters(shards, { longPollTimeoutMs: 1000, lingerMs: 1000, keepAliveMs: 500 });
  });
  afterEach(() => {
    live.shutdown();
    jest.useRealTimers();
  });

  it('watches a stream once for all its readers and unwatches it a linger time after the last one left', () => {
    const a = live.join('/s');
    const b = live.join('/s');
    expect(a).toBe(b);
    expect(shards.watched).toEqual(['/s']);
    live.leave(a);
    jest.advanceTimersByTime(3000);
    expect(shards.unwatched).toEqual([]);
    live.leave(b);
    jest.advanceTimersByTime(2100);
    expect(shards.unwatched).toEqual(['/s']);
    expect(live.watchedStreams).toBe(0);
    live.join('/s');
    expect(shards.watched).toEqual(['/s', '/s']);
  });

  it('keeps a stream watched when a reader comes back within the linger time', () => {
    live.leave(live.join('/s'));
    jest.advanceTimersByTime(500);
    const again = live.join('/s');
    jest.advanceTimersByTime(5000);
    expect(shards.unwatched).toEqual([]);
    live.leave(again);
  });

  it('wakes a waiter only once the tail passes its seq, and at once when it already has', async () => {
    const w = live.join('/s');
    const early = waiter(3);
    live.wait(w, early);
    shards.answerWatch(tail({ nextSeq: 3, version: 1 }));
    await flush();
    expect(early.woken).toBe(0);
    shards.listener([tail({ nextSeq: 4, version: 2, bytes: 100 })]);
    expect(early.woken).toBe(1);
    expect(w.bytes).toBe(100);
    const late = waiter(2);
    live.wait(w, late);
    expect(late.woken).toBe(1);
    // One-shot: a waiter that was woken is no longer registered.
    shards.listener([tail({ nextSeq: 5, version: 3 })]);
    expect(early.woken).toBe(1);
  });

  it('wakes every waiter on a seal and on a delete, and on a new stream of the same name', () => {
    const w = live.join('/s');
    shards.listener([tail({ nextSeq: 2, version: 1 })]);
    const a = waiter(2);
    const b = waiter(2);
    const c = waiter(2);
    live.wait(w, a);
    live.wait(w, b);
    shards.listener([tail({ nextSeq: 2, closed: true, version: 2 })]);
    expect([a.woken, b.woken]).toEqual([1, 1]);
    shards.listener([tail({ streamId: 8, nextSeq: 0, version: 3 })]);
    live.wait(w, c);
    expect(c.woken).toBe(1);
    const d = waiter(0, 8);
    live.wait(w, d);
    expect(d.woken).toBe(0);
    shards.listener([tail({ streamId: 8, nextSeq: 0, deleted: true, version: 4 })]);
    expect(d.woken).toBe(1);
  });

  it('ignores a watch reply older than an event already delivered', async () => {
    const w = live.join('/s');
    shards.listener([tail({ nextSeq: 9, version: 5 })]);
    shards.answerWatch(tail({ nextSeq: 4, version: 4 }));
    await flush();
    expect(w.tail?.nextSeq).toBe(9);
    expect(live.tailOf('/s')?.nextSeq).toBe(9);
    expect(live.tailOf('/other')).toBeNull();
  });

  it('ignores events of streams nobody watches', () => {
    shards.listener([tail({ name: '/other', nextSeq: 9 })]);
    expect(live.watchedStreams).toBe(0);
  });

  it('shares one read among readers at the same position', async () => {
    const p: ReadParams = { name: '/s', seq: 4, count: 10, bytes: 100, format: 'sse' };
    const r1 = live.read(p);
    const r2 = live.read({ ...p });
    const r3 = live.read({ ...p, seq: 5 });
    void live.read({ ...p, name: '/t' });
    expect(shards.reads).toHaveLength(3);
    expect(r1).toBe(r2);
    const result = { body: Buffer.alloc(0) } as ReadResult;
    shards.answerReads(result);
    expect(await r1).toBe(result);
    await r3;
    // Settled reads are not reused.
    void live.read(p);
    expect(shards.reads).toHaveLength(4);
  });

  it('reuses a page read at a position until the tail moves', async () => {
    const w = live.join('/s');
    shards.listener([tail({ nextSeq: 5, version: 1 })]);
    const p: ReadParams = { name: '/s', seq: 4, count: 10, bytes: 100, format: 'sse' };
    const first = live.page(w, p);
    const page = { body: Buffer.from('x') } as ReadResult;
    shards.answerReads(page);
    expect(await first).toBe(page);
    expect(await live.page(w, { ...p })).toBe(page);
    expect(shards.reads).toHaveLength(1);
    shards.listener([tail({ nextSeq: 6, version: 2 })]);
    void live.page(w, p);
    expect(shards.reads).toHaveLength(2);
  });

  it('runs deferred work in order, in slices, yielding to the event loop between them', async () => {
    const ran: number[] = [];
    for (let i = 0; i < 1200; i++) live.defer(() => ran.push(i));
    expect(ran).toHaveLength(0);
    await flush();
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length).toBeLessThan(1200);
    await flush();
    await flush();
    expect(ran).toEqual(Array.from({ length: 1200 }, (_, i) => i));
  });

  it('calls keepAlive on live readers and shutdown on every reader, once', () => {
    const reader = { keepAlive: jest.fn(), shutdown: jest.fn() };
    live.add(reader);
    jest.advanceTimersByTime(1100);
    expect(reader.keepAlive).toHaveBeenCalledTimes(2);
    live.shutdown();
    expect(reader.shutdown).toHaveBeenCalledTimes(1);
    expect(live.closed).toBe(true);
    jest.advanceTimersByTime(5000);
    expect(reader.keepAlive).toHaveBeenCalledTimes(2);
  });
  it('wakes readers of committed data when the stable tail passes their seq, a Kafka fetch waiter when the tail does', () => {
    let stable: number | null = 2;
    live.setStableTail((name) => (name === '/s' ? stable : null));
    const w = live.join('/s');
    shards.listener([tail({ nextSeq: 2, version: 1 })]);
    const reader = waiter(2);
    const fetch = Object.assign(waiter(2), { uncommitted: true });
    live.wait(w, reader);
    live.wait(w, fetch);
    // The open transaction's records (and a plain append after them) move the tail, not the stable tail.
    shards.listener([tail({ nextSeq: 5, version: 2 })]);
    expect(fetch.woken).toBe(1);
    expect(reader.woken).toBe(0);
    expect(live.tailOf('/s')!.nextSeq).toBe(2);
    expect(live.stableTail('/s', 5)).toBe(2);
    // The marker lands (a tail move) before the coordinator closes the transaction: still not due.
    shards.listener([tail({ nextSeq: 6, version: 3 })]);
    expect(reader.woken).toBe(0);
    stable = null;
    live.visibilityChanged('/s');
    expect(reader.woken).toBe(1);
    expect(live.tailOf('/s')!.nextSeq).toBe(6);
  });
});
