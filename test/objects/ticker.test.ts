/**
 * The background ticker (src/objects/ticker.ts): one pass at a time on its interval; a pass whose
 * result says more work waits is followed at once by the next, and stop() ends the chain.
 */
import { Ticker } from '../../src/objects/ticker';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('Ticker', () => {
  it('runs the next pass at once while a pass says more work waits, then waits for the interval again', async () => {
    const starts: number[] = [];
    let left = 5;
    const t = new Ticker(
      async () => {
        starts.push(Date.now());
        await pause(5);
        return --left;
      },
      400,
      () => undefined,
      (r) => r > 0,
    );
    const t0 = Date.now();
    t.start();
    await pause(700);
    // The first pass at ~400 ms, four more right after it; the next interval's at ~800 ms.
    expect(starts).toHaveLength(5);
    expect(starts[0]! - t0).toBeGreaterThanOrEqual(350);
    expect(starts[4]! - starts[0]!).toBeLessThan(250);
    await pause(300);
    expect(starts.length).toBeGreaterThanOrEqual(6);
    await t.stop();
  });

  it('never overlaps passes, and stops the chain when stopped', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    const t = new Ticker(
      async () => {
        running++;
        most = Math.max(most, running);
        passes++;
        await pause(3);
        running--;
        return true;
      },
      20,
      () => undefined,
      (more) => more,
    );
    t.start();
    await pause(200);
    await t.stop();
    const at = passes;
    await pause(100);
    expect(passes).toBe(at);
    expect(most).toBe(1);
    expect(passes).toBeGreaterThan(5);
  });
});
