/**
 * The raw and json-array read formats walk stored batches and join record values without decoding
 * records (shard-reader.ts `gatherValues`, raw-page.ts). Checked here against what the records
 * appended say a page must hold, for every start and several count and byte budgets, over layouts
 * that stress the page planning: single-record appends (a frame per record), batches, two streams
 * interleaved (a chunk per append) and small segments (chunks cut at segment ends).
 */
import * as path from 'node:path';
import { type SvcError } from '../../../src/errors';
import { renderJsonArray } from '../../../src/shards/render/json-array';
import { openMemoryStore } from '../../../src/shards/worker/memory-store';
import { SegmentLog } from '../../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../../src/shards/worker/shard';
import { type DecodedRecord } from '../../../src/util/record-batch';
import { tempDir } from '../../helpers/node-process';

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

async function build(segmentBytes: number, appends: Array<{ name: string; values: Buffer[] }>): Promise<Shard> {
  const shard = new Shard(openMemoryStore(), SegmentLog.open(path.join(tempDir(), 'log'), segmentBytes), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } });
  for (const name of new Set(appends.map((a) => a.name))) {
    await call((r) => shard.create({ name, contentType: 'application/json', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);
  }
  for (const a of appends) {
    const records = a.values.map((value) => ({ key: null, value, headers: null }));
    await call((r) => shard.append({ name: a.name, origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false }, r), shard);
  }
  return shard;
}

/** The value of record `i`: a JSON string of varying length. */
const value = (i: number): Buffer => Buffer.from(JSON.stringify(`v${i}-${'x'.repeat((i * 37) % 300)}`));

/** What a page from `from` holds: records while the count allows, the first whatever its size, then while the bytes allow. */
function expected(values: Buffer[], from: number, count: number, bytes: number): { values: Buffer[]; next: number } {
  const out: Buffer[] = [];
  let used = 0;
  for (let i = from; i < values.length && out.length < count; i++) {
    if (out.length > 0 && used + values[i]!.length > bytes) break;
    out.push(values[i]!);
    used += values[i]!.length;
  }
  return { values: out, next: from + out.length };
}

function checkEveryStart(shard: Shard, name: string, values: Buffer[]): void {
  for (const [count, bytes] of [[100_000, 1 << 24], [7, 1 << 24], [100_000, 1000], [3, 450], [1, 1]] as const) {
    for (let from = 0; from <= values.length; from += 1 + (from % 5)) {
      const want = expected(values, from, count, bytes);
      const raw = shard.read({ name, seq: from, count, bytes, format: 'raw' });
      expect({ from, count, bytes, next: raw.nextSeq, n: raw.count }).toEqual({ from, count, bytes, next: want.next, n: want.values.length });
      expect(raw.body.equals(Buffer.concat(want.values))).toBe(true);
      const json = shard.read({ name, seq: from, count, bytes, format: 'json-array' });
      const records = want.values.map((v, i) => ({ offset: from + i, value: v }) as unknown as DecodedRecord);
      expect(json.body.toString()).toBe(renderJsonArray(records).toString());
      expect(json.nextSeq).toBe(want.next);
    }
  }
}

describe('raw and json-array reads', () => {
  const values = Array.from({ length: 240 }, (_, i) => value(i));

  it('join exactly the values due, for a stream of single-record appends', async () => {
    const shard = await build(1 << 20, values.map((v) => ({ name: '/s', values: [v] })));
    checkEveryStart(shard, '/s', values);
    await shard.close();
  });

  it('join exactly the values due, for a stream of batched appends', async () => {
    const appends = [];
    for (let i = 0; i < values.length; i += 40) appends.push({ name: '/b', values: values.slice(i, i + 40) });
    const shard = await build(1 << 20, appends);
    checkEveryStart(shard, '/b', values);
    await shard.close();
  });

  it('join exactly the values due when another stream interleaves (a chunk per append) and segments are small', async () => {
    const appends = values.flatMap((v, i) => [{ name: '/i', values: [v] }, { name: '/other', values: [value(i + 1000)] }]);
    const shard = await build(4096, appends);
    checkEveryStart(shard, '/i', values);
    await shard.close();
  });

  it('answer [] and an empty body at the tail', async () => {
    const shard = await build(1 << 20, [{ name: '/t', values: [value(1)] }]);
    expect(shard.read({ name: '/t', seq: 1, count: 10, bytes: 100, format: 'json-array' }).body.toString()).toBe('[]');
    expect(shard.read({ name: '/t', seq: 1, count: 10, bytes: 100, format: 'raw' }).body.length).toBe(0);
    await shard.close();
  });
});
