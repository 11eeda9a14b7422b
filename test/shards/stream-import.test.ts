/**
 * Opening a stream on one node from the frames another node wrote (docs/storage.md, "Imported
 * streams"): a real ShardClient writes streams in one data directory, their frames are taken from
 * its segment files, and a second ShardClient on another data directory (another shard count)
 * imports them.
 */
import { type StreamImport } from '../../src/shards/types';
import { tempDir } from '../helpers/node-process';
import { type ShardClient, appendKafka, appendRecords, createStream, importInput, kafkaBatch, rec, readAll, rejection, startShards } from './helpers/import-fixture';

const HTTP_PRODUCER = { id: 'writer-1', epoch: 3, seq: 0 };
const KAFKA_PID = 4242n;

let sourceDir: string;
let source: ShardClient;
let targetDir: string;
let target: ShardClient;

async function expectSame(name: string): Promise<void> {
  const [a, b] = [await source.head(name), await target.head(name)];
  const pick = (i: typeof a) => ({ startSeq: i.startSeq, nextSeq: i.nextSeq, closed: i.closed, contentType: i.contentType, createdAtMs: i.createdAtMs, kafkaTopic: i.kafkaTopic });
  expect(pick(b)).toEqual(pick(a));
  for (const format of ['json', 'raw', 'kafka'] as const) {
    const [x, y] = [await readAll(source, name, format), await readAll(target, name, format)];
    expect(y.count).toBe(x.count);
    expect(y.nextSeq).toBe(x.nextSeq);
    expect(y.body.equals(x.body)).toBe(true);
  }
}

beforeAll(async () => {
  sourceDir = tempDir();
  targetDir = tempDir();
  source = await startShards(sourceDir, 1);
  // Another shard count: the imported streams get local ids and shards of their own.
  target = await startShards(targetDir, 3);

  // /imp/a: keys and headers, an HTTP idempotent producer, an idempotent Kafka producer, a trim.
  await createStream(source, '/imp/a');
  await appendRecords(source, '/imp/a', [rec('zero', 'k0', [['h', '0']]), rec('one', null, [['h', '1'], ['h', null]])]);
  for (let i = 0; i < 3; i++) await appendRecords(source, '/imp/a', [rec(`p${i}`, `pk${i}`)], { ...HTTP_PRODUCER, seq: i });
  await appendKafka(source, '/imp/a', kafkaBatch(KAFKA_PID, 0, 0, ['ka', 'kb', 'kc']));
  await appendKafka(source, '/imp/a', kafkaBatch(KAFKA_PID, 0, 3, ['kd', 'ke']));
  await source.trim({ name: '/imp/a', seq: 3 });
  await appendRecords(source, '/imp/a', [rec('after-trim', 'kt', [['x', 'y']])]);

  // /imp/s: sealed by an idempotent producer's seal without records.
  await createStream(source, '/imp/s', 'text/plain');
  await appendRecords(source, '/imp/s', [rec('first'), rec('second')]);
  await appendRecords(source, '/imp/s', [], { id: 'sealer', epoch: 0, seq: 0 }, true);

  // /imp/t: trimmed to its tail: the start lies beyond every record it has.
  await createStream(source, '/imp/t');
  await appendRecords(source, '/imp/t', [rec('gone-1'), rec('gone-2')]);
  await source.trim({ name: '/imp/t', seq: 2 });

  // /imp/big: ~2.4 MiB in 600 batches: crosses to the worker in several chunks.
  await createStream(source, '/imp/big');
  const value = 'v'.repeat(1000);
  for (let i = 0; i < 600; i++) await appendRecords(source, '/imp/big', [rec(`${i}:${value}`, `k${i}`), rec(`${i}b`, null, [['n', String(i)]]), rec(`${i}c:${value}`), rec(`${i}d:${value}`), rec(`${i}e:${value}`)]);
});

/** Set once a test closed the clients (see import-fixture.ts on why not in afterAll). */
let closed = false;
afterAll(async () => {
  if (closed) return;
  await source?.close();
  await target?.close();
});

describe('importing a stream written by another node', () => {
  it('keeps every record (seq, value, key, headers, timestamp), the start and the tail, in json, raw and kafka reads', async () => {
    const input = await importInput(source, sourceDir, '/imp/a');
    const r = await target.importStream('/imp/a', input);
    expect(r.replaced).toBe(false);
    expect(r.info.startSeq).toBe(3);
    expect(r.info.nextSeq).toBe(11);
    await expectSame('/imp/a');
    const json = JSON.parse((await target.read({ name: '/imp/a', seq: 3, count: 100, bytes: 1 << 20, format: 'json' })).body.toString()) as Array<Record<string, unknown>>;
    expect(json.map((x) => x.seq)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(json[7]).toMatchObject({ key: 'kt', headers: { x: 'y' }, body: 'after-trim' });
  });

  it('answers an HTTP producer retry and a Kafka producer retry with duplicate, and takes their next sequences', async () => {
    const http = await appendRecords(target, '/imp/a', [rec('p2-again')], { ...HTTP_PRODUCER, seq: 2 });
    expect(http.duplicate).toBe(true);
    expect(http.startSeq).toBe(4);
    const kafka = await appendKafka(target, '/imp/a', kafkaBatch(KAFKA_PID, 0, 3, ['kd', 'ke']));
    expect(kafka.duplicate).toBe(true);
    expect(kafka.startSeq).toBe(8);
    // A gap is still a gap, and the producers go on where they were.
    const gap = await rejection(appendKafka(target, '/imp/a', kafkaBatch(KAFKA_PID, 0, 9, ['x'])));
    expect(gap.outcome?.kind).toBe('sequence_gap');
    expect((await appendRecords(target, '/imp/a', [rec('p3')], { ...HTTP_PRODUCER, seq: 3 })).startSeq).toBe(11);
    expect((await appendKafka(target, '/imp/a', kafkaBatch(KAFKA_PID, 0, 5, ['kf']))).startSeq).toBe(12);
  });

  it('keeps a seal and the sealing producer: a retry of the seal is a duplicate, an append is refused', async () => {
    await target.importStream('/imp/s', await importInput(source, sourceDir, '/imp/s'));
    await expectSame('/imp/s');
    expect((await target.head('/imp/s')).closed).toBe(true);
    const again = await appendRecords(target, '/imp/s', [], { id: 'sealer', epoch: 0, seq: 0 }, true);
    expect(again.duplicate).toBe(true);
    const refused = await rejection(appendRecords(target, '/imp/s', [rec('late')]));
    expect(refused.outcome?.kind).toBe('closed');
  });

  it('imports a stream trimmed to its tail: empty, starting where it was trimmed, appends go on from there', async () => {
    await target.importStream('/imp/t', await importInput(source, sourceDir, '/imp/t'));
    const h = await target.head('/imp/t');
    expect({ startSeq: h.startSeq, nextSeq: h.nextSeq }).toEqual({ startSeq: 2, nextSeq: 2 });
    expect((await appendRecords(target, '/imp/t', [rec('new')])).startSeq).toBe(2);
  });

  it('imports a large stream in bounded chunks, identical record for record', async () => {
    const input = await importInput(source, sourceDir, '/imp/big');
    const bytes = (input.frames as Buffer[]).reduce((n, f) => n + f.length, 0);
    // More than two chunks of IMPORT_CHUNK_BYTES (1 MiB).
    expect(bytes).toBeGreaterThan(2 << 20);
    const r = await target.importStream('/imp/big', input);
    expect(r.dataFrames).toBe(600);
    await expectSame('/imp/big');
  });

  it('survives a restart of the importing node, producer state included', async () => {
    const before = await readAll(target, '/imp/a', 'kafka');
    await target.close();
    target = await startShards(targetDir, 3);
    const after = await readAll(target, '/imp/a', 'kafka');
    expect(after.body.equals(before.body)).toBe(true);
    await expectSame('/imp/big');
    await expectSame('/imp/s');
    expect((await appendRecords(target, '/imp/a', [rec('p3-again')], { ...HTTP_PRODUCER, seq: 3 })).duplicate).toBe(true);
    expect((await appendKafka(target, '/imp/a', kafkaBatch(KAFKA_PID, 0, 5, ['kf']))).duplicate).toBe(true);
  });

  it('fails with data_corrupt on a flipped byte and leaves no stream', async () => {
    const input = await importInput(source, sourceDir, '/imp/big');
    const frames = (input.frames as Buffer[]).map((f) => Buffer.from(f));
    // A byte of a record value in a frame near the end: earlier chunks have been written by then.
    const victim = frames[frames.length - 3]!;
    victim[victim.length - 100] = victim[victim.length - 100]! ^ 0x01;
    const name = '/imp/big';
    const err = await rejection(target.importStream('/imp/flipped', { meta: { ...input.meta, meta: { ...input.meta.meta, name: '/imp/flipped' } }, frames }));
    expect(err.code).toBe('data_corrupt');
    expect((await rejection(target.head('/imp/flipped'))).code).toBe('not_found');
    expect((await target.list({ prefix: '/imp/flipped', startAfter: '', limit: 10 })).streams).toEqual([]);
    // The stream imported earlier under its own name is untouched.
    await expectSame(name);
  });

  it('leaves the local copy as it was when the source fails half-way', async () => {
    const input = await importInput(source, sourceDir, '/imp/big');
    const frames = input.frames as Buffer[];
    async function* failing(): AsyncGenerator<Buffer> {
      for (let i = 0; i < frames.length; i++) {
        if (i === 400) throw new Error('object store went away');
        yield frames[i]!;
      }
    }
    const before = await target.head('/imp/big');
    await expect(target.importStream('/imp/big', { meta: input.meta, frames: failing() })).rejects.toThrow('object store went away');
    const after = await target.head('/imp/big');
    expect(after.streamId).toBe(before.streamId);
    await expectSame('/imp/big');
  });

  it('replaces an existing local copy (one that took appends here included)', async () => {
    await createStream(target, '/imp/a2');
    await appendRecords(target, '/imp/a2', [rec('a stale local record')]);
    const input = await importInput(source, sourceDir, '/imp/a');
    const renamed: StreamImport = { meta: { ...input.meta, meta: { ...input.meta.meta, name: '/imp/a2' } }, frames: input.frames };
    const r = await target.importStream('/imp/a2', renamed);
    expect(r.replaced).toBe(true);
    const [x, y] = [await readAll(source, '/imp/a', 'kafka'), await readAll(target, '/imp/a2', 'kafka')];
    expect(y.body.equals(x.body)).toBe(true);
    // Importing /imp/a again over the copy that took appends here puts it back as the source has it.
    const again = await target.importStream('/imp/a', await importInput(source, sourceDir, '/imp/a'));
    expect(again.replaced).toBe(true);
    await expectSame('/imp/a');
  });

  it('shows readers the local copy while an import of the name is under way, then the whole imported stream', async () => {
    await createStream(target, '/imp/live');
    await appendRecords(target, '/imp/live', [rec('local-0'), rec('local-1')]);
    const local = await target.head('/imp/live');
    const input = await importInput(source, sourceDir, '/imp/big');
    const frames = input.frames as Buffer[];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let sent = 0;
    async function* paused(): AsyncGenerator<Buffer> {
      for (let i = 0; i < frames.length; i++) {
        if (i === 400) await gate;
        sent = i;
        yield frames[i]!;
      }
    }
    const done = target.importStream('/imp/live', { meta: { ...input.meta, meta: { ...input.meta.meta, name: '/imp/live' } }, frames: paused() });
    // Two chunks (2 MiB, ~400 frames) are written before the source pauses.
    while (sent < 399) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    const during = await target.head('/imp/live');
    expect({ streamId: during.streamId, nextSeq: during.nextSeq }).toEqual({ streamId: local.streamId, nextSeq: 2 });
    expect((await target.list({ prefix: '/imp/live', startAfter: '', limit: 10 })).streams.map((x) => x.streamId)).toEqual([local.streamId]);
    release();
    const r = await done;
    expect(r.replaced).toBe(true);
    const [x, y] = [await readAll(source, '/imp/big', 'json'), await readAll(target, '/imp/live', 'json')];
    expect(y.body.equals(x.body)).toBe(true);
  });

  it('refuses a meta naming another stream', async () => {
    const input = await importInput(source, sourceDir, '/imp/s');
    expect((await rejection(target.importStream('/imp/other', input))).code).toBe('bad_request');
    expect((await rejection(target.head('/imp/other'))).code).toBe('not_found');
  });

  it('drops the local copy: gone here, also after a restart; dropping again is a no-op', async () => {
    expect(await target.dropStream('/imp/a2')).toEqual({ dropped: true });
    expect((await rejection(target.head('/imp/a2'))).code).toBe('not_found');
    expect(await target.dropStream('/imp/a2')).toEqual({ dropped: false });
    await target.close();
    target = await startShards(targetDir, 3);
    expect((await rejection(target.head('/imp/a2'))).code).toBe('not_found');
    await expectSame('/imp/a');
  });

  it('keeps a copy opened at or after the move a drop is for (the stream came back while the drop waited)', async () => {
    const input = await importInput(source, sourceDir, '/imp/a');
    const back: StreamImport = { meta: { ...input.meta, meta: { ...input.meta.meta, name: '/imp/back' } }, frames: input.frames, epoch: 5 };
    await target.importStream('/imp/back', back);
    // The drop of the move at epoch 4 (the copy before it) and of the move at 5 itself find this copy, opened at 5.
    expect(await target.dropStream('/imp/back', 4)).toEqual({ dropped: false });
    expect(await target.dropStream('/imp/back', 5)).toEqual({ dropped: false });
    expect((await target.head('/imp/back')).nextSeq).toBe((await source.head('/imp/a')).nextSeq);
    // A later move's drop takes it.
    expect(await target.dropStream('/imp/back', 6)).toEqual({ dropped: true });
    expect((await rejection(target.head('/imp/back'))).code).toBe('not_found');
  });

  it('closes both nodes', async () => {
    closed = true;
    await target.close();
    await source.close();
  });
});
