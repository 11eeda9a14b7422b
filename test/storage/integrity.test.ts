/**
 * What the disk does to a shard: damaged frames on reads (every read format), a damaged frame
 * in the middle of the newest segment at recovery, missing segments, and refusals that name
 * the shard, the file, the cause and the remedy (docs/storage.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SvcError } from '../../src/errors';
import { crc32c } from '../../src/util/crc32c';
import { initDataDir } from '../../src/shards/data-dir';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { openRocksStore } from '../../src/shards/worker/rocks-store';
import { type KvStore } from '../../src/shards/worker/kv-store';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { type ReadFormat } from '../../src/shards/types';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

function open(dir: string, store: KvStore, segmentBytes = 1 << 20): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), segmentBytes), { shardId: 7, shardCount: 8, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } });
}

async function create(shard: Shard, name: string): Promise<void> {
  await call((r) => shard.create({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);
}

async function append(shard: Shard, name: string, body: string): Promise<number> {
  const r = await call<{ startSeq: number }>((reply) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: [rec(body)] }, contentType: null, close: false }, reply), shard);
  return r.startSeq;
}

function bodies(shard: Shard, name: string): string[] {
  const r = shard.read({ name, seq: 0, count: 100000, bytes: 1 << 30, format: 'json' });
  return (JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body);
}

const logDir = (dir: string) => path.join(dir, 'log');
const segFile = (dir: string, segId: number) => path.join(logDir(dir), segmentFileName(segId));

/** Flip one byte of the file at the first occurrence of `needle` (a record's value). */
function flipByteOf(file: string, needle: string): number {
  const b = fs.readFileSync(file);
  const at = b.indexOf(needle);
  if (at < 0) throw new Error(`${needle} not in ${file}`);
  b[at] = b[at]! ^ 0x20;
  fs.writeFileSync(file, b);
  return at;
}

const FORMATS: ReadFormat[] = ['json', 'raw', 'binary', 'sse', 'json-array', 'kafka'];

describe('reads of damaged data', () => {
  it.each(FORMATS)('refuses a flipped byte in record data with data_corrupt naming the stream and seqs (%s)', async (format) => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/c');
    for (let i = 0; i < 5; i++) await append(shard, '/c', `value-${i}`);
    flipByteOf(segFile(dir, 0), 'value-3');
    let err: unknown = null;
    try {
      shard.read({ name: '/c', seq: 0, count: 1000, bytes: 1 << 20, format });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('data_corrupt');
    expect((err as SvcError).message).toMatch(/stream \/c: records 0\.\.4/);
    expect((err as SvcError).details).toMatchObject({ stream: '/c', from_seq: 0, to_seq: 4 });
  });

  it.each(FORMATS)('refuses a byte flipped on disk after a good read of the same chunk, when it is read again (%s)', async (format) => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/r');
    for (let i = 0; i < 5; i++) await append(shard, '/r', `value-${i}`);
    expect(shard.read({ name: '/r', seq: 0, count: 1000, bytes: 1 << 20, format }).count).toBe(5);
    flipByteOf(segFile(dir, 0), 'value-4');
    expect(() => shard.read({ name: '/r', seq: 0, count: 1000, bytes: 1 << 20, format })).toThrow(/stream \/r: records 0\.\.4 cannot be served/);
    expect(() => shard.read({ name: '/r', seq: 4, count: 1000, bytes: 1 << 20, format })).toThrow(/data_corrupt|cannot be served/);
  });

  it.each(FORMATS)('serves the records of a chunk before a damaged frame to a read that stops before it (%s)', async (format) => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/p');
    for (let i = 0; i < 5; i++) await append(shard, '/p', `value-${i}`);
    flipByteOf(segFile(dir, 0), 'value-3');
    const r = shard.read({ name: '/p', seq: 0, count: 2, bytes: 1 << 20, format });
    expect(r.count).toBe(2);
    expect(r.nextSeq).toBe(2);
    if (format === 'raw') expect(r.body.toString()).toBe('value-0value-1');
  });

  it('refuses a valid frame of another stream where the index points (the frame says which stream it belongs to)', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/a');
    await append(shard, '/a', 'mine');
    // Rewrite the stream id of /a's data frame (keeping its CRC valid): the bytes are whole, but not /a's.
    const file = segFile(dir, 0);
    const b = fs.readFileSync(file);
    const at = b.indexOf('mine');
    let pos = 0;
    for (;;) {
      const size = 8 + b.readUInt32BE(pos);
      if (pos + size > at) break;
      pos += size;
    }
    b.writeUInt32BE(99, pos + 9);
    b.writeUInt32BE(crc32c(b.subarray(pos + 8, pos + 8 + b.readUInt32BE(pos))), pos + 4);
    fs.writeFileSync(file, b);
    expect(() => shard.read({ name: '/a', seq: 0, count: 10, bytes: 1 << 20, format: 'raw' })).toThrow(/belongs to stream id 99/);
    expect(() => shard.read({ name: '/a', seq: 0, count: 10, bytes: 1 << 20, format: 'json' })).toThrow(/belongs to stream id 99/);
  });
});

describe('recovery of a damaged newest segment', () => {
  it('refuses to start when a damaged frame is followed by valid acknowledged frames, naming shard, file and remedy', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/r');
    for (let i = 0; i < 30; i++) await append(shard, '/r', `ack-${i}`);
    flipByteOf(segFile(dir, 0), 'ack-5');
    // A fresh index: replay must walk the whole segment, as after a crash before any checkpoint.
    let msg = '';
    try {
      open(dir, openMemoryStore());
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^shard 7: /);
    expect(msg).toContain(segFile(dir, 0));
    expect(msg).toMatch(/a valid frame follows it/);
    expect(msg).toMatch(/svc repair/);
    // Nothing was cut: the acknowledged frames after the damage are still on disk.
    expect(fs.readFileSync(segFile(dir, 0)).includes('ack-29')).toBe(true);
  });

  it('still cuts a genuinely torn tail (a partial last write) and keeps everything before it', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/t');
    for (let i = 0; i < 10; i++) await append(shard, '/t', `ok-${i}`);
    const file = segFile(dir, 0);
    const size = fs.statSync(file).size;
    // The last frame half written, then garbage of a torn page.
    fs.truncateSync(file, size - 7);
    fs.appendFileSync(file, Buffer.alloc(300, 0));
    const again = open(dir, openMemoryStore());
    expect(again.recovery.truncatedBytes).toBeGreaterThan(0);
    expect(bodies(again, '/t')).toEqual(Array.from({ length: 9 }, (_, i) => `ok-${i}`));
  });
});

describe('missing segments', () => {
  it('refuses to start when a segment the index refers to is missing, instead of re-creating it empty', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store, 1024);
    await create(shard, '/m');
    for (let i = 0; i < 40; i++) await append(shard, '/m', 'x'.repeat(80) + i);
    await shard.close();
    fs.rmSync(segFile(dir, 1));
    expect(() => open(dir, store, 1024)).toThrow(new RegExp(`shard 7: segment file ${segFile(dir, 1).replace(/[/.]/g, '\\$&')} is missing.*Restore the file from a backup, or run \`svc repair`));
    expect(fs.existsSync(segFile(dir, 1))).toBe(false);
  });

  it('refuses to start when the newest segment is missing (new data would land under old index entries)', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store, 1024);
    await create(shard, '/m');
    for (let i = 0; i < 40; i++) await append(shard, '/m', 'x'.repeat(80) + i);
    await shard.close();
    const segs = fs.readdirSync(logDir(dir)).sort();
    fs.rmSync(path.join(logDir(dir), segs[segs.length - 1]!));
    expect(() => open(dir, store, 1024)).toThrow(/is missing but the index refers to it/);
  });
});

describe('startup refusals', () => {
  it('name the node file and the remedy when svc-node.json is truncated', () => {
    const dir = tempDir();
    initDataDir(dir, 4);
    const file = path.join(dir, 'svc-node.json');
    fs.writeFileSync(file, '{"format":1,"sha');
    expect(() => initDataDir(dir, 4)).toThrow(new RegExp(`^${file.replace(/[/.]/g, '\\$&')} cannot be read \\(.+\\); restore it from a backup`));
  });

  it('name the index directory, RocksDB\'s own reason and the remedy when the index cannot be opened', async () => {
    const dir = tempDir();
    const location = path.join(dir, 'index');
    const store = await openRocksStore(location);
    store.write([{ type: 'put', key: Buffer.from('k'), value: Buffer.from('v') }], true);
    await store.close();
    // A truncated index: RocksDB's CURRENT file names a manifest that is gone.
    for (const f of fs.readdirSync(location)) if (f.startsWith('MANIFEST')) fs.truncateSync(path.join(location, f), 10);
    let err: Error | null = null;
    try {
      await openRocksStore(location);
    } catch (e) {
      err = e as Error;
    }
    expect(err).not.toBeNull();
    expect(err!.message).toContain(location);
    expect(err!.message).not.toMatch(/^Database is not open$/);
    expect(err!.message).toMatch(/svc repair/);
    expect(err!.cause).toBeDefined();
  });
});

describe('rebuilding the index after the reaper', () => {
  const tick = () => new Promise((r) => setTimeout(r, 20));

  it('brings back every live stream, its state and its records when the segments holding their create frames were reaped', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store, 1024);
    await create(shard, '/keep');
    await create(shard, '/sealed');
    await create(shard, '/gone');
    await call((r) => shard.configure({ name: '/keep', kafkaTopic: 'kept-topic' }, r), shard);
    for (let i = 0; i < 40; i++) await append(shard, '/gone', 'g'.repeat(100) + i);
    await append(shard, '/sealed', 'last words');
    await call((r) => shard.append({ name: '/sealed', origin: 'http', payload: { kind: 'records', records: [] }, contentType: null, close: true }, r), shard);
    for (let i = 0; i < 5; i++) await append(shard, '/keep', `k${i}`);
    await call((r) => shard.trim({ name: '/keep', seq: 2 }, r), shard);
    await call((r) => shard.delete('/gone', r), shard);
    for (let i = 0; i < 20; i++) await append(shard, '/keep', 'k'.repeat(100) + i);
    // Dead-segment detection carries the catalog forward first; the reaper deletes once that is durable.
    for (let i = 0; i < 5; i++) {
      shard.maintain();
      await tick();
    }
    const reaped = shard.reap();
    expect(reaped).toBeGreaterThan(0);
    expect(fs.existsSync(segFile(dir, 0))).toBe(false); // the segment holding every CREATE frame is gone
    const before = { keep: bodies(shard, '/keep'), sealed: bodies(shard, '/sealed'), keepInfo: shard.head('/keep'), sealedInfo: shard.head('/sealed') };
    await shard.close();

    // The index is lost: rebuild from the segments alone.
    const rebuilt = open(dir, openMemoryStore(), 1024);
    expect(bodies(rebuilt, '/keep')).toEqual(before.keep);
    expect(bodies(rebuilt, '/sealed')).toEqual(before.sealed);
    const keep = rebuilt.head('/keep');
    expect({ startSeq: keep.startSeq, nextSeq: keep.nextSeq, kafkaTopic: keep.kafkaTopic }).toEqual({ startSeq: before.keepInfo.startSeq, nextSeq: before.keepInfo.nextSeq, kafkaTopic: 'kept-topic' });
    expect(rebuilt.head('/sealed').closed).toBe(true);
    expect(rebuilt.head('/sealed').nextSeq).toBe(before.sealedInfo.nextSeq);
    expect(() => rebuilt.head('/gone')).toThrow(/no stream/);
    // New streams never reuse an id of the old ones.
    await create(rebuilt, '/new');
    expect(rebuilt.head('/new').streamId).toBeGreaterThan(keep.streamId);
    expect(await append(rebuilt, '/keep', 'after')).toBe(before.keepInfo.nextSeq);
  });

  it('carries the catalog forward and reaps while appends keep the log busy', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore(), 1024);
    await create(shard, '/busy');
    await create(shard, '/old');
    for (let i = 0; i < 30; i++) await append(shard, '/old', 'o'.repeat(100) + i);
    await call((r) => shard.delete('/old', r), shard);
    // Appends in flight during every dead-segment check: the log is never idle when it runs.
    const sent: Array<Promise<number>> = [];
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 5; i++) sent.push(append(shard, '/busy', `b${round}-${i}-` + 'x'.repeat(60)));
      shard.maintain();
      shard.reap();
      await tick();
    }
    await Promise.all(sent);
    expect(fs.existsSync(segFile(dir, 0))).toBe(false);
    const before = bodies(shard, '/busy');
    expect(before).toHaveLength(50);
    await shard.close();
    const rebuilt = open(dir, openMemoryStore(), 1024);
    expect(bodies(rebuilt, '/busy')).toEqual(before);
    expect(() => rebuilt.head('/old')).toThrow(/no stream/);
  });
});
