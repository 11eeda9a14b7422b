/**
 * The byte rate that bounds compaction's store I/O (src/objects/byte-rate.ts), driven by a fake
 * clock: time moves only when the limiter sleeps, so the schedule is the same on a loaded machine.
 */
import { ByteRate, type ByteRateClock } from '../../src/objects/byte-rate';

/** A clock whose sleeps advance the time by exactly what was asked (after the current macrotask). */
function fakeClock(start = 0): ByteRateClock & { t: number; sleeps: number[] } {
  const c = {
    t: start,
    sleeps: [] as number[],
    now: () => c.t,
    sleep: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        c.sleeps.push(ms);
        setImmediate(() => {
          if (signal.aborted) return reject(signal.reason);
          c.t += ms;
          resolve();
        });
      }),
  };
  return c;
}

/** A clock whose sleeps end only when their signal aborts. */
function stuckClock(): ByteRateClock {
  return {
    now: () => 0,
    sleep: (_ms, signal) => new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
  };
}

/** The most bytes granted in any window (t - 1000, t] (the maximum is at a window ending at a grant). */
function busiestSecond(grants: ReadonlyArray<{ at: number; bytes: number }>): number {
  let most = 0;
  for (const g of grants) most = Math.max(most, grants.filter((x) => x.at > g.at - 1000 && x.at <= g.at).reduce((n, x) => n + x.bytes, 0));
  return most;
}

/** Take each of `sizes` in turn, recording when each was granted. */
async function takeAll(rate: ByteRate, clock: ByteRateClock, sizes: readonly number[]): Promise<Array<{ at: number; bytes: number }>> {
  const signal = new AbortController().signal;
  const grants: Array<{ at: number; bytes: number }> = [];
  for (const bytes of sizes) {
    expect(await rate.take(bytes, signal)).toBe('granted');
    grants.push({ at: clock.now(), bytes });
  }
  return grants;
}

describe('ByteRate', () => {
  it('grants at once while the last second has room, then waits for bytes to age out', async () => {
    const clock = fakeClock(1_000_000);
    const rate = new ByteRate(1000, clock);
    const grants = await takeAll(rate, clock, [400, 400, 200, 300]);
    // 1000 bytes fill the second at once; the next 300 wait until those are a second (and a 10 ms slot) old.
    expect(grants.map((g) => g.at - 1_000_000)).toEqual([0, 0, 0, 1010]);
    expect(clock.sleeps).toEqual([1010]);
    expect(rate.grantedBytes).toBe(1300);
    expect(rate.waitedMs).toBe(1010);
  });

  it('keeps every one-second window within the bound, at close to the bound, for requests of any size up to it', async () => {
    const clock = fakeClock();
    const rate = new ByteRate(10_000, clock);
    // A fixed pseudo-random sequence of sizes from 1 to 5,000 bytes (as compaction's GETs and PUTs).
    let x = 12345;
    const sizes = Array.from({ length: 2000 }, () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return 1 + (x % 5000);
    });
    const total = sizes.reduce((n, b) => n + b, 0);
    const grants = await takeAll(rate, clock, sizes);
    expect(busiestSecond(grants)).toBeLessThanOrEqual(10_000);
    // Never faster than the bound allows (the first second's bytes go at once), and no slower than
    // the bound less one request per second (a request waits only for room), with the slots' 1%.
    const end = grants[grants.length - 1]!.at;
    expect(end).toBeGreaterThanOrEqual((total / 10_000 - 1) * 1000);
    expect(end).toBeLessThanOrEqual((total / (10_000 - 5000) + 1) * 1010);
    expect(rate.grantedBytes).toBe(total);
  });

  it('paces N bytes of requests at N/2 bytes a second over about two seconds, never more than N/2 in one', async () => {
    const clock = fakeClock();
    const n = 64 * 1024;
    const rate = new ByteRate(n / 2, clock);
    // Compaction's shape: a run's reads (sixteen ranges of 1 KiB), then its write of the same bytes.
    const sizes = Array.from({ length: 2 }, () => [...Array.from({ length: 16 }, () => 1024), 16 * 1024]).flat();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
    const grants = await takeAll(rate, clock, sizes);
    expect(busiestSecond(grants)).toBeLessThanOrEqual(n / 2);
    // N/2 in the first second at once (the first run), the second run once the first has aged out.
    expect(grants.slice(0, 17).every((g) => g.at === 0)).toBe(true);
    expect(grants.slice(17).every((g) => g.at >= 1000 && g.at <= 1010)).toBe(true);
  });

  it('grants a request larger than the bound alone, and holds the window for as long as its bytes take', async () => {
    const clock = fakeClock();
    const rate = new ByteRate(1000, clock);
    const grants = await takeAll(rate, clock, [100, 3000, 100]);
    // The 3,000 bytes wait for the 100 before them to leave; the next 100 wait three seconds after them.
    expect(grants.map((g) => g.at)).toEqual([0, 1010, 1010 + 3010]);
  });

  it('grants takes in the order they were asked: a large one is not overtaken by small ones', async () => {
    const clock = fakeClock();
    const rate = new ByteRate(1000, clock);
    const signal = new AbortController().signal;
    const order: string[] = [];
    await rate.take(900, signal);
    await Promise.all([
      rate.take(800, signal).then(() => order.push(`big@${clock.now()}`)),
      rate.take(50, signal).then(() => order.push(`small@${clock.now()}`)),
      rate.take(50, signal).then(() => order.push(`small@${clock.now()}`)),
    ]);
    expect(order).toEqual(['big@1010', 'small@1010', 'small@1010']);
  });

  it('grants zero bytes at once and never waits after the window has emptied', async () => {
    const clock = fakeClock();
    const rate = new ByteRate(1000, clock);
    const signal = new AbortController().signal;
    await rate.take(1000, signal);
    expect(await rate.take(0, signal)).toBe('granted');
    expect(clock.sleeps).toEqual([]);
    clock.t += 5000;
    expect(await rate.take(1000, signal)).toBe('granted');
    expect(clock.sleeps).toEqual([]);
  });

  it("answers 'stopped' to a take waiting when its signal aborts, and to the takes behind it", async () => {
    const rate = new ByteRate(1000, stuckClock());
    const stop = new AbortController();
    expect(await rate.take(1000, stop.signal)).toBe('granted');
    const waiting = rate.take(10, stop.signal);
    const behind = rate.take(10, stop.signal);
    stop.abort();
    expect(await waiting).toBe('stopped');
    expect(await behind).toBe('stopped');
    expect(await rate.take(1, stop.signal)).toBe('stopped');
  });

  it('refuses a bound that is not a positive number', () => {
    expect(() => new ByteRate(0)).toThrow(RangeError);
    expect(() => new ByteRate(-1)).toThrow(RangeError);
    expect(() => new ByteRate(Number.NaN)).toThrow(RangeError);
  });
});
