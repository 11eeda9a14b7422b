/**
 * Many readers of one large catch-up page at once, half of them reading slowly (2 MiB/s: 16 s a
 * body), on both engines: every body arrives whole and byte-identical. A response being written
 * to a peer that keeps reading is paced by backpressure and never timed out
 * (src/program/http/README.md, "Write pacing and the idle timeout"); on uWS its fixed 10 s
 * timeout used to cut such bodies.
 */
import { createHash } from 'node:crypto';
import { startNode } from '../helpers/node-process';
import { throttledGet } from '../helpers/throttled-get';

const MiB = 1024 * 1024;
const PAGE = 32 * MiB;
/** Concurrent readers; every other one reads at SLOW_RATE. */
const READERS = 64;
const SLOW_RATE = 2 * MiB;

jest.setTimeout(180_000);

describe.each(['uws', 'node'] as const)('%s engine', (engine) => {
  test(`${READERS} concurrent readers of a 32 MiB catch-up page, half of them at 2 MiB/s, all get it whole`, async () => {
    const node = await startNode({ engine, args: ['--read-max-bytes', String(PAGE), '--shards', '1'] });
    try {
      expect((await fetch(`${node.url}/big`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
      const records: Buffer[] = [];
      for (let i = 0; i < PAGE / MiB; i++) {
        const record = Buffer.alloc(MiB, 97 + (i % 26));
        record.write(`record ${i} `);
        records.push(record);
        const r = await fetch(`${node.url}/big`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: record });
        expect(r.status).toBe(200);
      }
      const want = createHash('sha256').update(Buffer.concat(records)).digest('hex');
      const target = `/big?seq=0&format=raw&bytes=${PAGE}&count=1000000`;
      const results = await Promise.all(Array.from({ length: READERS }, (_, i) => throttledGet(node.url, target, { bytesPerSecond: i % 2 === 1 ? SLOW_RATE : 0 })));
      const bad = results.map((r, i) => ({ ...r, i })).filter((r) => r.status !== 200 || !r.complete || r.length !== PAGE || r.sha256 !== want);
      expect(bad.map((r) => `#${r.i}${r.i % 2 === 1 ? ' (slow)' : ''}: ${r.status} ${r.received}/${r.length}, head at ${r.headMs} ms, last bytes at ${r.lastMs} ms, closed at ${r.ms} ms`)).toEqual([]);
    } finally {
      await node.stop();
    }
  });
});
