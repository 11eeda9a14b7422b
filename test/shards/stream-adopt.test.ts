/**
 * Adopting a stream from the object ledger without a copy (docs/objects.md, "Opening without a
 * copy"; `ShardClient.adoptStream`, the shard's `adopt` operation): the stream takes its start,
 * seal and meta from the ledger's `m/` record and its tail from the last entry, its producers as
 * given, and no frames; appends go on from the remote end; a local copy is replaced; a bad input
 * leaves nothing. Reads below the remote end are not served from the store yet (not built): they
 * are refused with storage_unavailable.
 */
import { type AdoptParams } from '../../src/shards/types';
import { type ProducerTable, encodeProducers, producerIdOf, recordBatchProducer } from '../../src/shards/worker/producers';
import { encodeRecordBatch, readBatchHeader } from '../../src/util/record-batch';
import { tempDir } from '../helpers/node-process';
import { type ShardClient, appendRecords, createStream, rec, rejection, startShards } from './helpers/import-fixture';

const WRITER = { id: 'writer-1', epoch: 3 };
const CREATED = 1_700_000_000_000;

let dir: string;
let shards: ShardClient;

/** The ledger's `m/` record of a stream written elsewhere. */
function ledgerMeta(name: string, startSeq: number, sealed = false): AdoptParams['meta'] {
  return { meta: { name, contentType: 'application/octet-stream', createdAtMs: CREATED }, startSeq, sealed };
}

/** Entries holding seqs 0..10 (a hole-free ledger, as the old owner recorded it). */
const ENTRIES: AdoptParams['entries'] = [
  { o: 'g/1/0000000001.000000000000', off: 0, len: 400, from: 0, to: 5 },
  { o: 'g/1/0000000001.000000000001', off: 128, len: 700, from: 5, to: 11 },
];

/** The old owner's producer table: writer-1 appended seqs 0, 1 and 2 of its epoch as records 0..2. */
function oldOwnerProducers(): unknown[] {
  const t: ProducerTable = new Map();
  for (let i = 0; i < 3; i++) {
    const batch = Buffer.from(encodeRecordBatch({ baseOffset: i, baseTimestamp: CREATED + i, records: [{ key: null, value: Buffer.from(`p${i}`), headers: null }], producerId: producerIdOf(WRITER.id), producerEpoch: WRITER.epoch, baseSequence: i }));
    recordBatchProducer(t, readBatchHeader(batch, 0), i, 1000);
  }
  return encodeProducers(t);
}

beforeAll(async () => {
  dir = tempDir();
  shards = await startShards(dir, 2);
});

let closed = false;
afterAll(async () => {
  if (!closed) await shards?.close();
});

describe('adopting a stream from the object ledger', () => {
  it('takes the start from m/ and the tail from the last entry, with no frames', async () => {
    const r = await shards.adoptStream('/ad/a', { meta: ledgerMeta('/ad/a', 3), entries: ENTRIES, epoch: 2, producers: oldOwnerProducers() });
    expect(r).toMatchObject({ replaced: false, remoteEnd: 11, remoteChunks: 2 });
    expect(r.info).toMatchObject({ name: '/ad/a', startSeq: 3, nextSeq: 11, closed: false, createdAtMs: CREATED });
    expect(await shards.head('/ad/a')).toMatchObject({ startSeq: 3, nextSeq: 11 });
  });

  it('appends from the remote end, and reads them back from the local log', async () => {
    const a = await appendRecords(shards, '/ad/a', [rec('local-0', 'k'), rec('local-1')]);
    expect({ startSeq: a.startSeq, nextSeq: a.nextSeq }).toEqual({ startSeq: 11, nextSeq: 13 });
    const page = JSON.parse((await shards.read({ name: '/ad/a', seq: 11, count: 10, bytes: 1 << 20, format: 'json' })).body.toString()) as Array<{ seq: number }>;
    expect(page.map((x) => x.seq)).toEqual([11, 12]);
  });

  it('refuses a read below the remote end (not served from the store yet), never skipping to the local records', async () => {
    for (const seq of [0, 3, 10]) {
      const err = await rejection(shards.read({ name: '/ad/a', seq, count: 10, bytes: 1 << 20, format: 'json' }));
      expect(err.code).toBe('storage_unavailable');
      expect(err.message).toContain(`records ${Math.max(seq, 3)}..10`);
    }
  });

  it('answers a retry of an append acknowledged by the old owner as a duplicate with its seqs, and takes the next', async () => {
    const dup = await appendRecords(shards, '/ad/a', [rec('p2-again')], { ...WRITER, seq: 2 });
    expect(dup.duplicate).toBe(true);
    expect({ startSeq: dup.startSeq, nextSeq: dup.nextSeq }).toEqual({ startSeq: 2, nextSeq: 3 });
    const next = await appendRecords(shards, '/ad/a', [rec('p3')], { ...WRITER, seq: 3 });
    expect(next.duplicate).toBeFalsy();
    expect(next.startSeq).toBe(13);
  });

  it('keeps the seal: appends are refused', async () => {
    const r = await shards.adoptStream('/ad/s', { meta: ledgerMeta('/ad/s', 0, true), entries: ENTRIES.slice(0, 1), epoch: 2 });
    expect(r.info).toMatchObject({ startSeq: 0, nextSeq: 5, closed: true });
    expect((await rejection(appendRecords(shards, '/ad/s', [rec('late')]))).outcome?.kind).toBe('closed');
  });

  it('adopts a stream trimmed past every entry, and one with no entries: empty, at the start', async () => {
    expect((await shards.adoptStream('/ad/t', { meta: ledgerMeta('/ad/t', 11), entries: ENTRIES })).info).toMatchObject({ startSeq: 11, nextSeq: 11 });
    expect((await shards.adoptStream('/ad/e', { meta: ledgerMeta('/ad/e', 0), entries: [] })).info).toMatchObject({ startSeq: 0, nextSeq: 0 });
    expect((await appendRecords(shards, '/ad/e', [rec('first')])).startSeq).toBe(0);
  });

  it('trims within the remote records (the start moves, no local record goes) and past them', async () => {
    await shards.adoptStream('/ad/tr', { meta: ledgerMeta('/ad/tr', 0), entries: ENTRIES });
    await appendRecords(shards, '/ad/tr', [rec('l-11'), rec('l-12')]);
    expect((await shards.trim({ name: '/ad/tr', seq: 7 })).startSeq).toBe(7);
    expect(await shards.head('/ad/tr')).toMatchObject({ startSeq: 7, nextSeq: 13 });
    // Trimming below the start is a no-op, as for any stream.
    expect((await shards.trim({ name: '/ad/tr', seq: 2 })).startSeq).toBe(7);
    expect((await rejection(shards.read({ name: '/ad/tr', seq: 0, count: 10, bytes: 1 << 20, format: 'json' }))).message).toContain('records 7..10');
    expect((await shards.trim({ name: '/ad/tr', seq: 12 })).startSeq).toBe(12);
    expect(await shards.head('/ad/tr')).toMatchObject({ startSeq: 12, nextSeq: 13 });
    const page = JSON.parse((await shards.read({ name: '/ad/tr', seq: 0, count: 10, bytes: 1 << 20, format: 'json' })).body.toString()) as Array<{ seq: number }>;
    expect(page.map((x) => x.seq)).toEqual([12]);
  });

  it('replaces a local copy, records written here included', async () => {
    await createStream(shards, '/ad/b');
    await appendRecords(shards, '/ad/b', [rec('old-0'), rec('old-1')]);
    const r = await shards.adoptStream('/ad/b', { meta: ledgerMeta('/ad/b', 0), entries: ENTRIES, epoch: 4 });
    expect(r.replaced).toBe(true);
    expect(r.info).toMatchObject({ startSeq: 0, nextSeq: 11 });
    // The old copy's records are gone: nothing local from the remote end, nothing local below it.
    const page = await shards.read({ name: '/ad/b', seq: 11, count: 10, bytes: 1 << 20, format: 'json' });
    expect({ count: page.count, startSeq: page.startSeq, nextSeq: page.nextSeq }).toEqual({ count: 0, startSeq: 0, nextSeq: 11 });
    expect((await rejection(shards.read({ name: '/ad/b', seq: 0, count: 10, bytes: 1 << 20, format: 'json' }))).code).toBe('storage_unavailable');
  });

  it('refuses overlapping entries (data_corrupt), a fork and a meta naming another stream (bad_request); nothing is left', async () => {
    const overlap = [ENTRIES[0]!, { ...ENTRIES[1]!, from: 4 }];
    const e1 = await rejection(shards.adoptStream('/ad/x', { meta: ledgerMeta('/ad/x', 0), entries: overlap }));
    expect(e1.code).toBe('data_corrupt');
    expect(e1.message).toContain('/ad/x');
    const fork = ledgerMeta('/ad/x', 0);
    fork.meta.fork = { source: '/ad/a', seq: 3 };
    expect((await rejection(shards.adoptStream('/ad/x', { meta: fork, entries: ENTRIES }))).code).toBe('bad_request');
    expect((await rejection(shards.adoptStream('/ad/x', { meta: ledgerMeta('/ad/other', 0), entries: ENTRIES }))).code).toBe('bad_request');
    expect((await rejection(shards.adoptStream('/ad/x', { meta: ledgerMeta('/ad/x', 0), entries: ENTRIES, producers: [['k', 1]] }))).code).toBe('data_corrupt');
    expect((await rejection(shards.head('/ad/x'))).code).toBe('not_found');
  });

  it('after a restart: the stream starts at the remote end (remote chunks are memory only; the open adopts again)', async () => {
    await shards.close();
    shards = await startShards(dir, 2);
    expect(await shards.head('/ad/a')).toMatchObject({ startSeq: 11, nextSeq: 14 });
    const page = JSON.parse((await shards.read({ name: '/ad/a', seq: 11, count: 10, bytes: 1 << 20, format: 'json' })).body.toString()) as Array<{ seq: number }>;
    expect(page.map((x) => x.seq)).toEqual([11, 12, 13]);
    expect((await shards.head('/ad/s')).closed).toBe(true);
    // Adopting again from the ledger (now holding the appends made here) replaces the local copy.
    const r = await shards.adoptStream('/ad/a', { meta: ledgerMeta('/ad/a', 3), entries: [...ENTRIES, { o: 'g/1/0000000002.000000000000', off: 0, len: 300, from: 11, to: 14 }], epoch: 5 });
    expect(r).toMatchObject({ replaced: true, remoteEnd: 14, remoteChunks: 3 });
    expect(r.info).toMatchObject({ startSeq: 3, nextSeq: 14 });
    expect((await appendRecords(shards, '/ad/a', [rec('after')])).startSeq).toBe(14);
  });

  it('closes', async () => {
    closed = true;
    await shards.close();
  });
});
