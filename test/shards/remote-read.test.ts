/**
 * Reads of an adopted stream from the object store (docs/objects.md, "How a read finds its object
 * and byte range"; Shard.readAsync): a stream written by one shard, its frames put into objects of
 * a real `file:` store as a group commit puts them (after other bytes), adopted by another shard
 * from the entries alone. Every read format answers what the writing shard answers, byte for byte
 * (seqs, keys, headers, timestamps; Kafka batches as stored); a small budget pages through every
 * seq once; appends after the adopt follow; an object cache of 0 bytes still serves; a flipped
 * byte fails only the reads that reach its range, naming the object.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ObjectStore, type ProducerSnapshotRecord, RangeCache, openObjectStore } from '../../src/objects';
import { adoptProducers } from '../../src/shards/worker/adopt-producers';
import { encodeProducerSnapshot, replayProducers } from '../../src/shards/worker/producer-snapshot';
import { DEFAULT_MAX_PRODUCERS, type ProducerTable, encodeProducers } from '../../src/shards/worker/producers';
import { type ReadFormat, type ReadResult } from '../../src/shards/types';
import { FrameType, parseFrame } from '../../src/shards/worker/frame';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { type RemoteBatch, type RemoteEntry, checkRemoteRange } from '../../src/shards/worker/remote-chunks';
import { rememberDamage } from '../../src/shards/worker/remote-reader';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type RemoteReads, Shard } from '../../src/shards/worker/shard';
import { type WorkerLog } from '../../src/shards/worker/worker-log';
import { encodeRecordBatch, readBatchHeader } from '../../src/util/record-batch';
import { call, createdMeta, logFrames, openLocalShard, rejection } from './helpers/import-fixture';

const NAME = '/rr/stream';
const FORMATS: ReadFormat[] = ['json', 'raw', 'binary', 'sse', 'json-array', 'kafka'];
const enc = (s: string): Buffer => Buffer.from(s);

let dir: string;
let store: ObjectStore;
let source: Shard;
/** The stream's frames as the source shard wrote them. */
let frames: Buffer[];
let entries: RemoteEntry[];
/** The source's answers to producer p-1's appends, by its seq. */
const acks = new Map<number, { startSeq: number; nextSeq: number }>();
/** Keys of the GETs made. */
const gets: string[] = [];

/** Put the frames into objects of ~`perObject` frames each, after 64 bytes of another stream's; the ledger entries of their data. */
async function putObjects(prefix: string, list: readonly Buffer[], perObject: number): Promise<RemoteEntry[]> {
  const out: RemoteEntry[] = [];
  for (let i = 0, k = 0; i < list.length; i += perObject, k++) {
    const group = list.slice(i, i + perObject);
    let from = -1;
    let to = -1;
    for (const f of group) {
      if (f[8] !== FrameType.Data) continue;
      const h = readBatchHeader(f, 13);
      if (from < 0) from = h.baseOffset;
      to = h.baseOffset + h.lastOffsetDelta + 1;
    }
    if (from < 0) continue;
    const body = Buffer.concat(group);
    const o = `${prefix}/g/${k}`;
    await store.put(o, [Buffer.alloc(64, 7), body]);
    out.push({ o, off: 64, len: body.length, from, to });
  }
  return out;
}

function adopter(name: string, cacheBytes: number, list: RemoteEntry[] = entries, log?: WorkerLog): Shard {
  const cache = new RangeCache<RemoteBatch[]>({ budgetBytes: cacheBytes, sizeOf: (v) => (v as RemoteBatch[]).reduce((t, b) => t + b.batch.length, 0), remember: rememberDamage });
  const remoteReads: RemoteReads = {
    cache,
    get: (key, range) => {
      gets.push(key);
      return store.get(key, range);
    },
    entries: async () => list.slice(),
    readAheadBytes: 4096,
  };
  return new Shard(openMemoryStore(), SegmentLog.open(path.join(dir, name, 'log'), 64 * 1024), {
    shardId: 0,
    shardCount: 1,
    maxChunkBytes: 1 << 20,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
    remoteReads,
    ...(log !== undefined ? { log } : {}),
  });
}

const read = (s: Shard, seq: number, format: ReadFormat, count = 100_000, bytes = 64 << 20): Promise<ReadResult> => call<ReadResult>(s, (r) => s.readAsync({ name: NAME, seq, count, bytes, format }, r));

/** Every page from `seq` to the tail: the pages' bodies and the seqs each started at. */
async function readPages(s: Shard, seq: number, format: ReadFormat, count?: number, bytes?: number): Promise<{ bodies: Buffer[]; count: number; next: number }> {
  const bodies: Buffer[] = [];
  let n = 0;
  for (let i = 0; i < 100_000; i++) {
    const r = await read(s, seq, format, count, bytes);
    bodies.push(Buffer.from(r.body));
    n += r.count;
    if (r.nextSeq >= r.tailSeq) return { bodies, count: n, next: r.nextSeq };
    expect(r.nextSeq).toBeGreaterThan(seq);
    seq = r.nextSeq;
  }
  throw new Error('no end');
}

/** Pages joined into what one read of everything says: JSON arrays concatenated, other bodies byte for byte. */
function joined(format: ReadFormat, bodies: Buffer[]): unknown {
  if (format === 'json' || format === 'json-array') return bodies.flatMap((b) => JSON.parse(b.toString()) as unknown[]);
  return Buffer.concat(bodies).toString('base64');
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-remote-read-'));
  store = openObjectStore(`file:${path.join(dir, 'objects')}`);
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  source = openLocalShard(path.join(dir, 'source'));
  await call(source, (r) => source.create({ name: NAME, contentType: 'application/json', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r));
  // Records with keys, headers, null values among them; an idempotent producer's batches; a Kafka batch of several records.
  for (let i = 0; i < 60; i++) {
    const records = Array.from({ length: 1 + (i % 3) }, (_, j) => ({
      key: j === 1 ? null : enc(`k-${i}-${j}`),
      value: enc(JSON.stringify({ i, j, pad: 'x'.repeat(i * 7) })),
      headers: j === 2 ? null : ([[enc('h'), enc(`v${i}`)], [enc('empty'), null]] as Array<readonly [Buffer, Buffer | null]>),
    }));
    const producer = i % 5 === 0 ? { id: 'p-1', epoch: 1, seq: i / 5 } : null;
    const a = await call<{ startSeq: number; nextSeq: number }>(source, (r) => source.append({ name: NAME, origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false, producer }, r));
    if (producer !== null) acks.set(producer.seq, { startSeq: a.startSeq, nextSeq: a.nextSeq });
    if (i % 10 === 9) {
      const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1_700_000_000_000 + i, records: [0, 1, 2, 3].map((j) => ({ key: enc(`kk${j}`), value: enc(`{"kafka":${j}}`), headers: [[enc('kh'), enc(`${j}`)]], timestampDelta: j })) });
      await call(source, (r) => source.append({ name: NAME, origin: 'kafka', payload: { kind: 'batches', body: Buffer.from(batch) }, contentType: null, close: false }, r));
    }
  }
  const info = source.head(NAME);
  frames = logFrames(path.join(dir, 'source', 'log'), info.streamId);
  entries = await putObjects('s', frames, 7);
  expect(entries.length).toBeGreaterThan(5);
});

afterAll(async () => {
  await source.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('reads of an adopted stream from the object store', () => {
  let shard: Shard;
  beforeAll(async () => {
    shard = adopter('a', 1 << 20);
    const meta = createdMeta(frames);
    await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta, startSeq: 0, sealed: false }, entries, epoch: 1 }, r));
  });
  afterAll(() => shard.close());

  it.each(FORMATS)('serves every record in %s as the writing shard does', async (format) => {
    const want = await readPages(source, 0, format);
    const got = await readPages(shard, 0, format);
    expect(got.count).toBe(want.count);
    expect(joined(format, got.bodies)).toEqual(joined(format, want.bodies));
  });

  it('pages through every seq once with a small budget, from any seq', async () => {
    const tail = source.head(NAME).nextSeq;
    for (const from of [0, 1, 17, tail - 3]) {
      const want = await readPages(source, from, 'json', 3, 200);
      const got = await readPages(shard, from, 'json', 3, 200);
      const seqs = (joined('json', got.bodies) as Array<{ seq: number }>).map((x) => x.seq);
      expect(seqs).toEqual(Array.from({ length: tail - from }, (_, i) => from + i));
      expect(joined('json', got.bodies)).toEqual(joined('json', want.bodies));
    }
  });

  it('serves the records appended after the adopt after the remote ones', async () => {
    const tail = source.head(NAME).nextSeq;
    const a = await call<{ startSeq: number }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: enc('after'), value: enc('{"after":1}'), headers: null }] }, contentType: null, close: false }, r));
    expect(a.startSeq).toBe(tail);
    const all = joined('json', (await readPages(shard, tail - 2, 'json')).bodies) as Array<{ seq: number; key: string }>;
    expect(all.map((x) => x.seq)).toEqual([tail - 2, tail - 1, tail]);
  });

  it('keeps its copy when adopted again at the same epoch (the appends it took stay), and refuses an adopt at an earlier one', async () => {
    // An opener tried again after a later step of its open failed: the entries it read again may
    // predate the appends the copy took meanwhile; replaced, the next append would reuse their seqs.
    const tail = shard.head(NAME).nextSeq;
    const meta = createdMeta(frames);
    await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta, startSeq: 0, sealed: false }, entries, epoch: 1 }, r));
    expect(shard.head(NAME).nextSeq).toBe(tail);
    const a = await call<{ startSeq: number }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: enc('again'), value: enc('{"again":1}'), headers: null }] }, contentType: null, close: false }, r));
    expect(a.startSeq).toBe(tail);
    const stale = await rejection(call(shard, (r) => shard.adopt({ name: NAME, meta: { meta, startSeq: 0, sealed: false }, entries, epoch: 0 }, r)));
    expect(stale.code).toBe('conflict');
    expect(shard.head(NAME).nextSeq).toBe(tail + 1);
  });
});

describe('producers replayed from the entries (AdoptParams.replayProducers)', () => {
  it('answers a retry of an append the old owner acknowledged as a duplicate with its seqs, and takes the next', async () => {
    const shard = adopter('producers', 1 << 20);
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries, epoch: 1, replayProducers: true }, r));
      const tail = shard.head(NAME).nextSeq;
      const append = (seq: number, value: string) =>
        call<{ startSeq: number; nextSeq: number; duplicate?: boolean }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: null, value: enc(value), headers: null }] }, contentType: null, close: false, producer: { id: 'p-1', epoch: 1, seq } }, r));
      // Sent at once: the retry waits for the replay, the plain append does not.
      const [dup, plain] = await Promise.all([
        append(11, '{"again":11}'),
        call<{ startSeq: number }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: null, value: enc('{"plain":1}'), headers: null }] }, contentType: null, close: false }, r)),
      ]);
      expect(dup).toMatchObject({ duplicate: true, ...acks.get(11) });
      expect(plain.startSeq).toBe(tail);
      const next = await append(12, '{"next":12}');
      expect(next.duplicate).toBeFalsy();
      expect(next.startSeq).toBe(tail + 1);
      expect((await rejection(append(20, '{"gap":20}'))).code).toBeDefined();
      // Every record is still served, the remote ones and those appended here.
      const all = joined('json', (await readPages(shard, 0, 'json')).bodies) as Array<{ seq: number }>;
      expect(all.map((x) => x.seq)).toEqual(Array.from({ length: tail + 2 }, (_, i) => i));
    } finally {
      await shard.close();
    }
  });
});

describe('producers from a snapshot and the entries after it (AdoptParams.producerSnapshot)', () => {
  /** The table the old owner held at `seq`: every batch below it applied. */
  async function tableAt(seq: number): Promise<ProducerTable> {
    const table: ProducerTable = new Map();
    for (const e of entries) {
      if (e.from >= seq) break;
      replayProducers(table, checkRemoteRange(NAME, e, await store.get(e.o, { offset: e.off, length: e.len })).filter((b) => b.baseSeq < seq), 0, DEFAULT_MAX_PRODUCERS);
    }
    return table;
  }
  /** An entry boundary with p-1's seqs 7 and 8 acknowledged below it and 11 above. */
  const snapshotSeq = (): number => {
    const e = entries.find((x) => x.from > acks.get(8)!.startSeq)!;
    expect(e.from).toBeLessThan(acks.get(11)!.startSeq);
    return e.from;
  };
  const reader = { get: (key: string, range: { offset: number; length: number }) => store.get(key, range) };
  const end = (): number => entries[entries.length - 1]!.to;

  it('reads only the entries after the snapshot, and answers retries from before it as duplicates', async () => {
    const seq = snapshotSeq();
    const producerSnapshot = { seq, producers: encodeProducers(await tableAt(seq)) };
    const shard = adopter('snapshot', 0);
    try {
      const before = gets.length;
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries, epoch: 1, replayProducers: true, producerSnapshot }, r));
      const append = (pseq: number) =>
        call<{ startSeq: number; nextSeq: number; duplicate?: boolean }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: null, value: enc(`{"p":${pseq}}`), headers: null }] }, contentType: null, close: false, producer: { id: 'p-1', epoch: 1, seq: pseq } }, r));
      // Seq 8 was acknowledged below the snapshot: only the snapshot knows it.
      expect(await append(8)).toMatchObject({ duplicate: true, ...acks.get(8) });
      expect(await append(11)).toMatchObject({ duplicate: true, ...acks.get(11) });
      expect((await append(12)).duplicate).toBeFalsy();
      const fetched = new Set(gets.slice(before));
      const below = entries.filter((e) => e.to <= seq).map((e) => e.o);
      expect(below.length).toBeGreaterThan(0);
      expect(below.filter((o) => fetched.has(o))).toEqual([]);
      expect(entries.filter((e) => e.to > seq).every((e) => fetched.has(e.o))).toBe(true);
    } finally {
      await shard.close();
    }
  });

  it('gives the table a replay of every entry gives, from an inline snapshot or one in an object', async () => {
    const full = await adoptProducers(reader, NAME, entries, 0, end());
    expect(full.from).toBeNull();
    const seq = snapshotSeq();
    const table = await tableAt(seq);
    const inline = await adoptProducers(reader, NAME, entries, 0, end(), DEFAULT_MAX_PRODUCERS, { seq, producers: encodeProducers(table) });
    const body = encodeProducerSnapshot(table, seq);
    await store.put('p/snap/1', body);
    const object = await adoptProducers(reader, NAME, entries, 0, end(), DEFAULT_MAX_PRODUCERS, { seq, o: 'p/snap/1', bytes: body.length });
    for (const r of [inline, object]) {
      expect(r).toMatchObject({ from: seq, unusable: null });
      expect(encodeProducers(r.table)).toEqual(encodeProducers(full.table));
      expect(r.bytes).toBeLessThan(full.bytes);
    }
  });

  it('replays every entry when the snapshot object is missing or damaged, or lies past the entries', async () => {
    const full = await adoptProducers(reader, NAME, entries, 0, end());
    const seq = snapshotSeq();
    await store.put('p/snap/bad', Buffer.from('{"v":1,"seq":'));
    const cases: Array<[ProducerSnapshotRecord, RegExp | null]> = [
      [{ seq, o: 'p/snap/none', bytes: 10 }, /missing/],
      [{ seq, o: 'p/snap/bad', bytes: 13 }, /not JSON/],
      [{ seq: end() + 1, producers: [] }, null],
    ];
    for (const [rec, why] of cases) {
      const r = await adoptProducers(reader, NAME, entries, 0, end(), DEFAULT_MAX_PRODUCERS, rec);
      expect(r.from).toBeNull();
      if (why === null) expect(r.unusable).toBeNull();
      else expect(r.unusable).toMatch(why);
      expect(encodeProducers(r.table)).toEqual(encodeProducers(full.table));
    }
  });
});

describe('an unusable producer snapshot, at the shard', () => {
  it('is logged (stream and why), and the producers come from every entry instead', async () => {
    const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
    const log: WorkerLog = { info: (fields, msg) => lines.push({ level: 'info', fields, msg }), warn: (fields, msg) => lines.push({ level: 'warn', fields, msg }) };
    const e = entries.find((x) => x.from > acks.get(8)!.startSeq)!;
    await store.put('p/snap/torn', Buffer.from('{"v":1,"seq":'));
    const shard = adopter('unusable', 1 << 20, entries, log);
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries, epoch: 1, replayProducers: true, producerSnapshot: { seq: e.from, o: 'p/snap/torn', bytes: 13 } }, r));
      const retry = await call<{ duplicate?: boolean }>(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: null, value: enc('{"p":8}'), headers: null }] }, contentType: null, close: false, producer: { id: 'p-1', epoch: 1, seq: 8 } }, r));
      // Seq 8 lies below the snapshot's seq: a full replay still knows it.
      expect(retry).toMatchObject({ duplicate: true, ...acks.get(8) });
      const warned = lines.filter((l) => l.level === 'warn');
      expect(warned).toHaveLength(1);
      expect(warned[0]!.msg).toMatch(/producer snapshot is unusable/);
      expect(warned[0]!.fields).toMatchObject({ stream: NAME, reason: expect.stringMatching(/not JSON/) });
    } finally {
      await shard.close();
    }
  });
});

describe('an object cache of 0 bytes', () => {
  it('still serves every record (the range fetched last stays with its reader)', async () => {
    const shard = adopter('zero', 0);
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries, epoch: 1 }, r));
      const want = await readPages(source, 0, 'raw', 5, 100);
      const got = await readPages(shard, 0, 'raw', 5, 100);
      expect(joined('raw', got.bodies)).toEqual(joined('raw', want.bodies));
    } finally {
      await shard.close();
    }
  });
});

describe('a damaged range', () => {
  it('fails only the reads that reach it, naming the object; the rest is served', async () => {
    const copy = await putObjects('d', frames, 7);
    const bad = copy[2]!;
    const obj = await store.get(bad.o);
    obj[bad.off + 40] = obj[bad.off + 40]! ^ 0xff;
    await store.put(bad.o, obj);
    const shard = adopter('damaged', 1 << 20, copy);
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries: copy, epoch: 1 }, r));
      const err = await rejection(read(shard, bad.from, 'json'));
      expect(err.code).toBe('data_corrupt');
      expect(err.details).toMatchObject({ stream: NAME, object: bad.o, from_seq: bad.from, to_seq: bad.to - 1 });
      const before = gets.filter((k) => k === bad.o).length;
      // Remembered: read again, not fetched again.
      expect((await rejection(read(shard, bad.from, 'json'))).code).toBe('data_corrupt');
      expect(gets.filter((k) => k === bad.o).length).toBe(before);
      const first = await read(shard, 0, 'json', 100_000, 64 << 20);
      expect(first.count).toBeGreaterThan(0);
      expect(first.nextSeq).toBeLessThanOrEqual(bad.from);
      const after = await read(shard, bad.to, 'json');
      expect((JSON.parse(after.body.toString()) as Array<{ seq: number }>)[0]!.seq).toBe(bad.to);
    } finally {
      await shard.close();
    }
  });
});

describe('compaction joining the remote records with those appended after the adopt', () => {
  // The new owner's compaction takes runs of small entries whatever their epoch: the adopted ones
  // and those of its own appends, which lie at and past the local start, into one entry. Once the
  // reaper deleted the old objects, the reader looks the ledger up again and must find the remote
  // seqs in that entry (in a failover every read from seq 0 skipped to the local start).
  it.each([
    ['every entry', 0],
    ['the last two remote entries', 2],
  ])('serves every record after a compaction of %s and the local ones', async (_what, last) => {
    const copy = await putObjects(`c${last}`, frames, 7);
    const ledger: RemoteEntry[] = copy.slice();
    const shard = adopter(`compacted-${last}`, 1 << 20, ledger);
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries: copy, epoch: 1 }, r));
      const remoteEnd = shard.head(NAME).nextSeq;
      for (let i = 0; i < 3; i++) {
        await call(shard, (r) => shard.append({ name: NAME, origin: 'http', payload: { kind: 'records', records: [{ key: enc(`after-${i}`), value: enc(`{"after":${i}}`), headers: null }] }, contentType: null, close: false }, r));
      }
      const tail = shard.head(NAME).nextSeq;
      // The compacted object: the frames of the entries it replaces, then the local appends' DATA frames.
      const kept = last === 0 ? [] : copy.slice(0, copy.length - last);
      const from = last === 0 ? 0 : copy[copy.length - last]!.from;
      const remote = frames.filter((f) => f[8] !== FrameType.Data || readBatchHeader(f, 13).baseOffset >= from);
      const local = logFrames(path.join(dir, `compacted-${last}`, 'log'), shard.head(NAME).streamId).filter((f) => f[8] === FrameType.Data);
      expect(local.map((f) => readBatchHeader(f, 13).baseOffset)).toEqual([remoteEnd, remoteEnd + 1, remoteEnd + 2]);
      const body = Buffer.concat([...remote, ...local]);
      const o = `c${last}/c/0`;
      await store.put(o, body);
      ledger.splice(0, ledger.length, ...kept, { o, off: 0, len: body.length, from, to: tail });
      for (const e of copy.slice(kept.length)) await store.delete(e.o);
      const got = joined('json', (await readPages(shard, 0, 'json', 5, 300)).bodies) as Array<{ seq: number }>;
      expect(got.map((x) => x.seq)).toEqual(Array.from({ length: tail }, (_, i) => i));
      const want = joined('json', (await readPages(source, 0, 'json')).bodies) as unknown[];
      expect(got.slice(0, remoteEnd)).toEqual(want);
    } finally {
      await shard.close();
    }
  });
});

describe('a shard that reads nothing from the object store', () => {
  it('refuses a read below the remote end with storage_unavailable, never skipping to the local records', async () => {
    const shard = openLocalShard(path.join(dir, 'none'));
    try {
      await call(shard, (r) => shard.adopt({ name: NAME, meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, entries, epoch: 1 }, r));
      const err = await rejection(read(shard, 3, 'json'));
      expect(err.code).toBe('storage_unavailable');
      expect(err.message).toContain(`records 3..${entries[entries.length - 1]!.to - 1}`);
    } finally {
      await shard.close();
    }
  });
});

// The frames parsed here are the source's own: a sanity check of the fixture.
it('the fixture puts every data frame of the stream into an object', () => {
  const data = frames.filter((f) => parseFrame(f, 0, true)?.type === FrameType.Data).length;
  expect(data).toBeGreaterThan(60);
  expect(entries[0]!.from).toBe(0);
});
