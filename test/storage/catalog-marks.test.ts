/**
 * Which stream ids a segment's catalog frames name (src/shards/worker/catalog-marks.ts): known
 * from the writes of this process, and for a segment written before it, found by a scan that
 * reads no more than its budget per call.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CatalogMarks } from '../../src/shards/worker/catalog-marks';
import { encodeCatalogFrames } from '../../src/shards/worker/catalog-carry';
import { FrameType, encodeFrame } from '../../src/shards/worker/frame';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { newStreamState } from '../../src/shards/worker/stream-state';
import { readMeta } from '../../src/shards/worker/stream-meta';

const SEGMENT = 4 << 20;
const data = (id: number, bytes: number): Buffer => encodeFrame(FrameType.Data, id, Buffer.alloc(bytes, 7));
const carried = (id: number): Buffer[] =>
  encodeCatalogFrames([newStreamState(id, readMeta({ name: `/s${id}`, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, createdAtMs: 0 }))].map((s) => ({ ...s, durable: true })), [id], id + 1);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-marks-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Segment 0: data of streams 1 and 2, a CREATE of 3, 3 MiB of data, a TRIM of 4, a CATALOG naming 9; segment 1: data only (written next). */
async function fill(log: SegmentLog): Promise<void> {
  await log.write([data(1, 100), data(2, 100_000)]);
  await log.write([encodeFrame(FrameType.Create, 3, Buffer.from('{}')), ...Array.from({ length: 3 }, () => data(1, 1 << 20))]);
  await log.write([encodeFrame(FrameType.Trim, 4, Buffer.alloc(8)), ...carried(9)]);
  await log.write([data(5, SEGMENT - 100)]);
}

test('a segment written by this process: its catalog frames are known without reading it', async () => {
  const log = SegmentLog.open(dir, SEGMENT);
  const marks = new CatalogMarks();
  log.onWrite = (segId, pos, bufs) => marks.written(segId, pos, bufs);
  await fill(log);
  expect(log.sealedSegments()).toEqual([0]);
  const read = jest.spyOn(log, 'read');
  expect(marks.idsIn(log, 0, { bytes: 0 })).toEqual(new Set([3, 4, 9]));
  expect(read).not.toHaveBeenCalled();
  log.close();
});

test('a segment written before: scanned within the budget of each call, with the same answer', async () => {
  const first = SegmentLog.open(dir, SEGMENT);
  await fill(first);
  first.close();
  const log = SegmentLog.open(dir, SEGMENT);
  const marks = new CatalogMarks();
  log.onWrite = (segId, pos, bufs) => marks.written(segId, pos, bufs);
  await log.write([data(6, 100)]); // appended to the tail segment (1), which stays unknown
  const read = jest.spyOn(log, 'read');
  const calls: Array<Set<number> | null | undefined> = [];
  for (let i = 0; i < 10; i++) {
    const budget = { bytes: 1 << 20 };
    const got = marks.idsIn(log, 0, budget);
    calls.push(got);
    // One block over the budget at most.
    expect(budget.bytes).toBeGreaterThan(-(1 << 20));
    if (got !== undefined) break;
  }
  expect(calls.slice(0, -1).every((c) => c === undefined)).toBe(true);
  expect(calls.length).toBeGreaterThan(2);
  expect(calls[calls.length - 1]).toEqual(new Set([3, 4, 9]));
  // Once known, it is not read again.
  read.mockClear();
  expect(marks.idsIn(log, 0, { bytes: 1 << 20 })).toEqual(new Set([3, 4, 9]));
  expect(read).not.toHaveBeenCalled();
  log.close();
});

test('a data-only segment is null; a torn end is skipped', async () => {
  const log = SegmentLog.open(dir, 1 << 20);
  await log.write([data(1, 1000), data(2, 1000)]);
  log.close();
  fs.appendFileSync(path.join(dir, fs.readdirSync(dir)[0]!), Buffer.from([0, 0, 9]));
  const again = SegmentLog.open(dir, 1 << 20);
  const marks = new CatalogMarks();
  expect(marks.idsIn(again, 0, { bytes: 1 << 20 })).toBeNull();
  again.close();
});
