/**
 * Two groups in flight (group-commit.ts): a second group starts while the first is being written
 * only when it is large, and the segment log takes overlapping writes, also across a segment roll.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GroupCommit } from '../../src/shards/worker/group-commit';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { type StreamState } from '../../src/shards/worker/stream-state';
import { tempDir } from '../helpers/node-process';

const stream = {} as StreamState; // group-commit only uses it as a map key

function fill(n: number, byte: number): Buffer {
  return Buffer.alloc(n, byte);
}

describe('segment log: overlapping writes', () => {
  it('a second write that lands in the segment the first one starts finds its file', async () => {
    const dir = path.join(tempDir('seglog-overlap-'), 'log');
    const log = SegmentLog.open(dir, 1000);
    // First write: 600 B in segment 0, then 600 B that roll to segment 1 (created by this write).
    const first = log.write([fill(600, 1), fill(600, 2)]);
    // Second write, laid out before the first resolves: it goes on in segment 1.
    const second = log.write([fill(300, 3)]);
    const [a, b] = await Promise.all([first, second]);
    expect(a.locations).toEqual([
      { segId: 0, pos: 0 },
      { segId: 1, pos: 0 },
    ]);
    expect(b.locations).toEqual([{ segId: 1, pos: 600 }]);
    const seg1 = fs.readFileSync(path.join(dir, segmentFileName(1)));
    expect(seg1.length).toBe(900);
    expect(seg1.subarray(0, 600).every((x) => x === 2)).toBe(true);
    expect(seg1.subarray(600).every((x) => x === 3)).toBe(true);
    log.close();
  });

  it('writes many buffers back to back (vectored write)', async () => {
    const dir = path.join(tempDir('seglog-writev-'), 'log');
    const log = SegmentLog.open(dir, 1 << 30);
    const bufs = Array.from({ length: 1500 }, (_, i) => fill(7, i & 0xff));
    const w = await log.write(bufs);
    expect(w.end).toEqual({ segId: 0, pos: 1500 * 7 });
    const seg = fs.readFileSync(path.join(dir, segmentFileName(0)));
    expect(seg.equals(Buffer.concat(bufs))).toBe(true);
    log.close();
  });
});

describe('group commit: a second group in flight', () => {
  function setup(): { gc: GroupCommit; writes: number[]; log: SegmentLog } {
    const log = SegmentLog.open(path.join(tempDir('gc-overlap-'), 'log'), 1 << 30);
    const writes: number[] = [];
    const write = log.write.bind(log);
    // Count the groups whose write has started but not finished.
    let inFlight = 0;
    log.write = async (bufs) => {
      inFlight++;
      writes.push(inFlight);
      try {
        return await write(bufs);
      } finally {
        inFlight--;
      }
    };
    const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined });
    return { gc, writes, log };
  }

  it('small groups wait for the one in flight', async () => {
    const { gc, writes, log } = setup();
    const done: number[] = [];
    gc.enqueue(stream, fill(100, 1), null);
    gc.whenDurable(() => done.push(1), () => 1);
    gc.flush();
    gc.enqueue(stream, fill(100, 2), null);
    gc.whenDurable(() => done.push(2), () => 2);
    gc.flush();
    await gc.drain();
    expect(writes).toEqual([1, 1]);
    expect(done).toEqual([1, 2]);
    log.close();
  });

  it('a group of 1 MiB or more starts while the previous one is written, and replies stay in order', async () => {
    const { gc, writes, log } = setup();
    const done: number[] = [];
    gc.enqueue(stream, fill(1 << 20, 1), null);
    gc.whenDurable(() => done.push(1), () => 1);
    gc.flush();
    gc.enqueue(stream, fill(1 << 20, 2), null);
    gc.whenDurable(() => done.push(2), () => 2);
    gc.flush();
    // A third group waits: two are in flight.
    gc.enqueue(stream, fill(1 << 20, 3), null);
    gc.whenDurable(() => done.push(3), () => 3);
    gc.flush();
    await gc.drain();
    expect(writes.slice(0, 2)).toEqual([1, 2]);
    expect(Math.max(...writes)).toBe(2);
    expect(done).toEqual([1, 2, 3]);
    log.close();
  });
});
