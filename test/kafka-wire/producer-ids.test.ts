/**
 * Producer ids drawn in blocks from one counter in the metadata store (src/kafka-wire/producer-ids.ts):
 * two allocators on one store (two nodes of a cluster) never hand out the same id, an allocator
 * opened again (a restart) continues above every id handed out before, and the counter starts
 * above the clock-based ids of the earlier scheme.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openLocalMetaStore } from '../../src/actors';
import { PRODUCER_ID_BLOCK, ProducerIds } from '../../src/kafka-wire/producer-ids';

test('two allocators on one store never repeat an id; a restart continues above them; the start is above the clock-based ids', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pids-'));
  try {
    const before = BigInt(Date.now()) * 4096n;
    let meta = await openLocalMetaStore(dir);
    const a = new ProducerIds(meta);
    const b = new ProducerIds(meta);
    const ids = await Promise.all(Array.from({ length: 2500 }, (_, i) => (i % 2 === 0 ? a : b).next()));
    expect(new Set(ids).size).toBe(ids.length);
    const max = ids.reduce((m, x) => (x > m ? x : m), 0n);
    expect(ids.every((x) => x >= before)).toBe(true);
    expect(max < 1n << 62n).toBe(true);
    await meta.close();
    meta = await openLocalMetaStore(dir);
    const again = await new ProducerIds(meta).next();
    expect(again > max).toBe(true);
    // The restarted allocator took one new block from the counter.
    expect(BigInt((meta.get<{ next: string }>('kafka/producer-ids')!.value.next)) - again).toBe(PRODUCER_ID_BLOCK);
    await meta.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
