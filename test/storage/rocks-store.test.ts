/**
 * The RocksDB adapter must not keep what it wrote: abstract-level registers every batch and
 * iterator with the database and a batch keeps a copy of its operations until it is closed, so an
 * adapter that only calls the synchronous write kept every index write ever made reachable (the
 * node's heap grew by hundreds of bytes per append). Measured in a child process started with
 * --expose-gc from the built adapter (dist/), so the heap can be collected before it is read.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { tempDir } from '../helpers/node-process';

const ADAPTER = path.join(__dirname, '..', '..', 'dist', 'shards', 'worker', 'rocks-store.js');

const SCRIPT = `
const { openRocksStore } = require(process.argv[1]);
(async () => {
  const store = await openRocksStore(process.argv[2]);
  const heap = () => { global.gc(); return process.memoryUsage().heapUsed; };
  const round = (r) => {
    for (let i = 0; i < 5000; i++) {
      const key = Buffer.alloc(16); key.writeUInt32BE(r, 0); key.writeUInt32BE(i, 4);
      store.write([{ type: 'put', key, value: Buffer.alloc(200, 1) }, { type: 'del', key: Buffer.from(key).fill(2, 8) }], false);
      if (i % 10 === 0 && store.range) store.range(key, Buffer.from([0xff]), 4);
    }
  };
  round(0);
  await new Promise((r) => setTimeout(r, 50));
  const before = heap();
  for (let r = 1; r <= 8; r++) round(r);
  await new Promise((r) => setTimeout(r, 50));
  const after = heap();
  await store.close();
  process.stdout.write(JSON.stringify({ writes: 40000, grewBytes: after - before }));
})();
`;

describe('the RocksDB store', () => {
  it('keeps nothing of the batches it has written and the ranges it has read', () => {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', SCRIPT, ADAPTER, path.join(tempDir(), 'index')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    const { writes, grewBytes } = JSON.parse(r.stdout) as { writes: number; grewBytes: number };
    // 40,000 writes of ~250 bytes each: kept, they would be ~10 MB of heap; a bounded adapter keeps none.
    expect(writes).toBe(40000);
    expect(grewBytes).toBeLessThan(2 * 1024 * 1024);
  });

  // Writes only in the write-ahead log (the process ends without closing, as in a crash), by the
  // store (WAL uncompressed) or by RocksDB with the binding's default ZSTD-compressed WAL, which
  // data directories written before the store turned compression off have: each is read back by
  // the other on the next open.
  const CRASH_WRITE = `
const [mode, target, dir] = process.argv.slice(1);
(async () => {
  const ops = [];
  for (let i = 0; i < 500; i++) ops.push({ type: 'put', key: Buffer.from('K' + String(i).padStart(4, '0')), value: Buffer.from('v' + i) });
  if (mode === 'store') {
    const store = await require(target).openRocksStore(dir);
    store.write(ops, true);
  } else {
    const { RocksLevel } = require(target);
    const db = new RocksLevel(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', walCompression: true });
    await db.open();
    const batch = db.batch();
    for (const op of ops) batch.put(op.key, op.value);
    batch._writeSync({ sync: true });
  }
  process.exit(0);
})();
`;
  const READ_BACK = `
const [target, dir] = process.argv.slice(1);
(async () => {
  const store = await require(target).openRocksStore(dir);
  const rows = store.scan(Buffer.from('K'));
  await store.close();
  process.stdout.write(JSON.stringify({ rows: rows.length, last: rows[rows.length - 1][1].toString() }));
})();
`;
  const READ_BACK_COMPRESSED = `
const [target, dir] = process.argv.slice(1);
(async () => {
  const { RocksLevel } = require(target);
  const db = new RocksLevel(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', walCompression: true });
  await db.open();
  const rows = [];
  for await (const [k, v] of db.iterator({ gte: Buffer.from('K'), lt: Buffer.from('L') })) rows.push([k, v]);
  await db.close();
  process.stdout.write(JSON.stringify({ rows: rows.length, last: rows[rows.length - 1][1].toString() }));
})();
`;
  const ROCKS = require.resolve('@nxtedition/rocksdb');
  const run = (script: string, args: string[]): string => {
    const r = spawnSync(process.execPath, ['-e', script, ...args], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    return r.stdout;
  };

  it('reads back writes a crash left in a compressed write-ahead log (an older data directory)', () => {
    const dir = path.join(tempDir(), 'index');
    run(CRASH_WRITE, ['rocks', ROCKS, dir]);
    expect(JSON.parse(run(READ_BACK, [ADAPTER, dir]))).toEqual({ rows: 500, last: 'v499' });
  });

  it('leaves a write-ahead log that a compressed-WAL RocksDB reads back after a crash (an older build)', () => {
    const dir = path.join(tempDir(), 'index');
    run(CRASH_WRITE, ['store', ADAPTER, dir]);
    expect(JSON.parse(run(READ_BACK_COMPRESSED, [ROCKS, dir]))).toEqual({ rows: 500, last: 'v499' });
  });
});
