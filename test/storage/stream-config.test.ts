/**
 * White-box tests of stream config in one shard (no threads, real segment files, in-memory
 * index twin): CONFIG frames replayed after a crash, and config changes taking effect for
 * appends accepted after them, before they are durable.
 */
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { SchemaRegistry } from '../../src/shards/schema-registry';
import { type KvStore } from '../../src/shards/worker/kv-store';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { type StreamInfo } from '../../src/shards/types';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });

const registry = (): SchemaRegistry =>
  new SchemaRegistry([{ name: 'num', type: 'json-schema', schema: { type: 'number' }, version: 1, createdAtMs: 0, updatedAtMs: 0 }]);

function open(dir: string, store: KvStore, schemas = registry()): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), 1 << 20), {
    shardId: 0,
    shardCount: 1,
    maxChunkBytes: 1 << 20,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
    schemas,
  });
}

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

const create = (shard: Shard, name: string) =>
  call((r) => shard.create({ name, contentType: 'application/json', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);

describe('stream config in a shard', () => {
  it('replays a CONFIG frame from the log when the index lags, as after a crash', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/a');
    const info = await call<StreamInfo>((r) => shard.configure({ name: '/a', schema: 'num', schemaValidate: true, kafkaTopic: 'topic-a', ttlSeconds: 60 }, r), shard);
    expect(info).toMatchObject({ schema: 'num', schemaValidate: true, kafkaTopic: 'topic-a', ttlSeconds: 60 });
    // Reopen over the same files with an empty index: the config comes back from the log.
    const fresh = open(dir, openMemoryStore());
    expect(fresh.head('/a')).toMatchObject({ schema: 'num', schemaValidate: true, kafkaTopic: 'topic-a', ttlSeconds: 60 });
  });

  it('replays later CONFIG frames over a checkpointed catalog, nulls included', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store);
    await create(shard, '/b');
    await call((r) => shard.configure({ name: '/b', kafkaTopic: 'explicit', ttlSeconds: 5 }, r), shard);
    await shard.close();
    const warm = open(dir, store);
    expect(warm.recovery.replayedFrames).toBe(0);
    expect(warm.head('/b')).toMatchObject({ kafkaTopic: 'explicit', ttlSeconds: 5 });
    await call((r) => warm.configure({ name: '/b', kafkaTopic: null, ttlSeconds: null }, r), warm);
    // No close: the checkpoint has not caught up with the last frame.
    const crashed = open(dir, store);
    expect(crashed.head('/b')).toMatchObject({ kafkaTopic: null, ttlSeconds: null });
  });

  it('checks appends accepted after a config change against it, before the change is durable', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/c');
    const results: Array<string | null> = [];
    const done = new Promise<void>((resolve) => {
      shard.configure({ name: '/c', schema: 'num', schemaValidate: true }, (err) => results.push(err?.code ?? null));
      shard.append({ name: '/c', origin: 'http', payload: { kind: 'records', records: [rec('"text"')] }, contentType: null, close: false }, (err) => results.push(err?.code ?? null));
      shard.append({ name: '/c', origin: 'http', payload: { kind: 'records', records: [rec('42')] }, contentType: null, close: false }, (err) => {
        results.push(err?.code ?? null);
        resolve();
      });
      shard.flush();
    });
    await done;
    // The invalid append is refused at once, before the config's group is durable.
    expect(results).toEqual(['schema_validation_failed', null, null]);
    expect(shard.head('/c').nextSeq).toBe(1);
  });

  it('reports a stream as bound from the moment its binding is accepted', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/d');
    expect(shard.streamBoundTo('num')).toBeNull();
    const pending = call((r) => shard.configure({ name: '/d', schema: 'num' }, r), shard);
    expect(shard.streamBoundTo('num')).toBe('/d');
    await pending;
    expect(shard.streamBoundTo('num')).toBe('/d');
    await call((r) => shard.configure({ name: '/d', schema: null }, r), shard);
    expect(shard.streamBoundTo('num')).toBeNull();
  });

  it('refuses to bind a schema this thread does not know', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore(), new SchemaRegistry());
    await create(shard, '/e');
    await expect(call((r) => shard.configure({ name: '/e', schema: 'num' }, r), shard)).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(
      call((r) => shard.create({ name: '/f', contentType: 'application/json', ttlSeconds: null, expiresAtMs: null, closed: false, records: [], schema: 'num' }, r), shard),
    ).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});
