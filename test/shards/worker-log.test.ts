/**
 * A shard worker's log lines (worker-log.ts) reach the node's log through the pool, with the
 * worker's number; other messages still reach the pool's hooks. A stand-in worker script posts
 * what a shard worker posts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkerConfig } from '../../src/shards/worker/worker-main';
import { type PoolHooks, WorkerPool } from '../../src/shards/worker-pool';

test('a worker\'s log line is logged by the pool at its level, with the worker number and its fields', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-worker-log-'));
  const file = path.join(dir, 'stand-in.js');
  fs.writeFileSync(
    file,
    `const { parentPort } = require('node:worker_threads');
     const { workerLogTo } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/shards/worker/worker-log.js'))});
     parentPort.postMessage({ type: 'ready', recovery: [] });
     const log = workerLogTo(parentPort);
     parentPort.on('message', (m) => {
       if (m === 'go') {
         log.warn({ stream: '/s', reason: 'torn' }, 'the snapshot is unusable');
         log.info({ stream: '/s' }, 'replayed');
         parentPort.postMessage({ type: 'other' });
       }
     });`,
  );
  const lines: Array<[string, object, string]> = [];
  const log = { info: (o: object, m: string) => lines.push(['info', o, m]), warn: (o: object, m: string) => lines.push(['warn', o, m]), error: (o: object, m: string) => lines.push(['error', o, m]) };
  const pool = await WorkerPool.start(file, 2, (w) => ({ shardIds: [w] }) as unknown as WorkerConfig, log);
  const hooked: unknown[] = [];
  const hooks: PoolHooks = { message: (_w, m) => void hooked.push(m), down: () => undefined, up: () => undefined };
  pool.setHooks(hooks);
  try {
    pool.worker(1)!.postMessage('go');
    const deadline = Date.now() + 5_000;
    while (hooked.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const mine = lines.filter(([, , m]) => m !== 'shard worker ready');
    expect(mine).toEqual([
      ['warn', { worker: 1, stream: '/s', reason: 'torn' }, 'the snapshot is unusable'],
      ['info', { worker: 1, stream: '/s' }, 'replayed'],
    ]);
    // A log line is the pool's; anything else still goes to the hooks.
    expect(hooked).toEqual([{ type: 'other' }]);
  } finally {
    await Promise.all(pool.stopSupervising().map((w) => w.terminate()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
