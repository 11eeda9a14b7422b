/**
 * White-box: an import cut short by a crash (the shard reopened over its files without closing) is
 * abandoned at the restart, whether the index was checkpointed during it or not, and the stream's
 * local copy is as it was; a completed import is replayed from the log alone. Also the chunking of
 * an import's input (import-chunks.ts).
 */
import * as path from 'node:path';
import { IMPORT_CHUNK_BYTES, frameChunks } from '../../src/shards/import-chunks';
import { type ImportedMeta } from '../../src/shards/types';
import { CHECKPOINT_EVERY_MS } from '../../src/shards/worker/checkpointer';
import { FrameType } from '../../src/shards/worker/frame';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { type Shard } from '../../src/shards/worker/shard';
import { tempDir } from '../helpers/node-process';
import { call, createdMeta, logFrames, openLocalShard as open, rec } from './helpers/import-fixture';

async function create(shard: Shard, name: string): Promise<void> {
  await call(shard, (r) => shard.create({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r));
}

async function append(shard: Shard, name: string, values: string[]): Promise<void> {
  await call(shard, (r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: values.map((v) => rec(v)) }, contentType: null, close: false }, r));
}

function values(shard: Shard, name: string): string[] {
  const r = shard.read({ name, seq: 0, count: 100_000, bytes: 1 << 30, format: 'json' });
  return (JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body);
}

/** A stream of `n` records written by a shard in its own directory: its meta and frames. */
async function written(n: number): Promise<{ meta: ImportedMeta; frames: Buffer[]; values: string[] }> {
  const dir = tempDir();
  const shard = open(dir);
  await create(shard, '/r');
  const vals = Array.from({ length: n }, (_, i) => `record ${i} ${'x'.repeat(200)}`);
  for (let i = 0; i < n; i += 10) await append(shard, '/r', vals.slice(i, i + 10));
  const id = shard.head('/r').streamId;
  await shard.close();
  const frames = logFrames(path.join(dir, 'log'), id);
  return { meta: { meta: createdMeta(frames), startSeq: 0, sealed: false }, frames, values: vals };
}

describe('an import cut short', () => {
  it.each([
    ['with the index checkpointed during the import', true],
    ['with nothing checkpointed since the start', false],
  ])('is abandoned at the restart %s, and the local copy is as it was', async (_what, checkpointed) => {
    const src = await written(200);
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store);
    await create(shard, '/r');
    await append(shard, '/r', ['local']);
    const { importId } = await call<{ importId: number }>(shard, (r) => shard.importBegin({ name: '/r', meta: src.meta }, r));
    const half = Buffer.concat(src.frames.slice(0, 10));
    await call(shard, (r) => shard.importFrames({ name: '/r', importId, frames: half }, r));
    if (checkpointed) await new Promise((r) => setTimeout(r, CHECKPOINT_EVERY_MS + 200)); // past the checkpoint interval
    // The crash: the files are reopened as they are (the index store survives only when checkpointed to).
    const again = open(dir, checkpointed ? store : openMemoryStore());
    expect(values(again, '/r')).toEqual(['local']);
    expect(again.list({ prefix: '', startAfter: '', limit: 10 }).streams.map((s) => s.name)).toEqual(['/r']);
    // The abandoned staging stream's DELETE is written; a second restart finds nothing to abandon.
    await again.close();
    const staging = logFrames(path.join(dir, 'log'), importId);
    expect(staging.map((f) => f[8])).toEqual([FrameType.Create, ...src.frames.slice(0, 10).filter((f) => f[8] === FrameType.Data).map(() => FrameType.Data), FrameType.Delete]);
    const third = open(dir);
    expect(values(third, '/r')).toEqual(['local']);
    // Only the local copy's chunk is held: the staging stream is gone from the catalog.
    expect(third.indexMemory().recentChunks).toBe(1);
    await expect(call(third, (r) => third.importFrames({ name: '/r', importId, frames: half }, r))).rejects.toMatchObject({ code: 'conflict' });
    await third.close();
  });

  it('is replayed whole from the log when it completed, and replaces the local copy there too', async () => {
    const src = await written(120);
    const dir = tempDir();
    const shard = open(dir);
    await create(shard, '/r');
    await append(shard, '/r', ['local']);
    const { importId } = await call<{ importId: number }>(shard, (r) => shard.importBegin({ name: '/r', meta: src.meta }, r));
    await call(shard, (r) => shard.importFrames({ name: '/r', importId, frames: Buffer.concat(src.frames) }, r));
    await call(shard, (r) => shard.importEnd({ name: '/r', importId }, r));
    expect(values(shard, '/r')).toEqual(src.values);
    // Replay with an empty index: the CONFIG frame that published the import names the stream.
    const again = open(dir);
    expect(values(again, '/r')).toEqual(src.values);
    expect(again.list({ prefix: '', startAfter: '', limit: 10 }).streams).toHaveLength(1);
    await again.close();
  });
});

describe('the chunks an import crosses in', () => {
  it('cuts at frame boundaries into chunks of at most 1 MiB, whatever the input buffers', async () => {
    const src = await written(6000);
    const all = Buffer.concat(src.frames);
    expect(all.length).toBeGreaterThan(IMPORT_CHUNK_BYTES);
    // The same bytes cut into pieces that split frames anywhere.
    const pieces: Buffer[] = [];
    for (let pos = 0, k = 1; pos < all.length; k = (k * 7919) % 4093) pieces.push(all.subarray(pos, (pos += 1 + k)));
    const chunks: Buffer[] = [];
    for await (const c of frameChunks(pieces)) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(IMPORT_CHUNK_BYTES);
    expect(Buffer.concat(chunks).equals(all)).toBe(true);
    // Each chunk is whole frames.
    for (const c of chunks) {
      let pos = 0;
      while (pos < c.length) pos += 8 + c.readUInt32BE(pos);
      expect(pos).toBe(c.length);
    }
  });

  it('refuses input that ends inside a frame, or a frame length no frame has', async () => {
    const src = await written(10);
    const all = Buffer.concat(src.frames);
    const drain = async (b: Buffer): Promise<unknown> => {
      for await (const _ of frameChunks([b])) void _;
      return null;
    };
    await expect(drain(all.subarray(0, all.length - 3))).rejects.toMatchObject({ code: 'data_corrupt' });
    const bad = Buffer.from(all);
    bad.writeUInt32BE(2, 0);
    await expect(drain(bad)).rejects.toMatchObject({ code: 'data_corrupt' });
  });
});
