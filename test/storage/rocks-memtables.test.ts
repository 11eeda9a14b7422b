/**
 * A node's shards take about the same index writes. With one memtable size their memtables filled
 * in step and all flushed at once, so the C heap swung by ~30 MiB every few minutes under an even
 * load (docs/operations.md, "Memory"). Each shard now has a size of its own, evenly spaced from 3/4
 * to 5/4 of the budget; RocksDB writes the size it was opened with into its OPTIONS file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { memtableBudget } from '../../src/shards/worker/rocks-store';
import { startNode } from '../helpers/node-process';

const MiB = 1024 * 1024;

/** `write_buffer_size` of the newest OPTIONS file of a RocksDB directory. */
function writeBufferSize(indexDir: string): number {
  const newest = fs
    .readdirSync(indexDir)
    .filter((f) => f.startsWith('OPTIONS-'))
    .sort()
    .pop();
  if (newest === undefined) throw new Error(`no OPTIONS file in ${indexDir}`);
  const m = /^\s*write_buffer_size=(\d+)$/m.exec(fs.readFileSync(path.join(indexDir, newest), 'utf8'));
  if (m === null) throw new Error(`no write_buffer_size in ${newest}`);
  return Number(m[1]);
}

describe('RocksDB memtables of a node', () => {
  it('spreads the budget from 3/4 to 5/4 of 8 MiB, the middle for a lone store', () => {
    expect(memtableBudget(0)).toBe(6 * MiB);
    expect(memtableBudget(0.5)).toBe(8 * MiB);
    expect(memtableBudget(1)).toBe(10 * MiB);
    expect(memtableBudget(7)).toBe(10 * MiB);
  });

  it('gives every shard its own memtable size, evenly spaced, with the budget on average unchanged', async () => {
    const node = await startNode({ args: ['--shards', '8'] });
    try {
      const sizes = [...Array(8).keys()].map((id) => writeBufferSize(path.join(node.dataDir, 'shards', String(id), 'index')));
      expect(new Set(sizes).size).toBe(8);
      expect(Math.min(...sizes)).toBe(1.5 * MiB);
      expect(Math.max(...sizes)).toBe(2.5 * MiB);
      const mean = sizes.reduce((a, b) => a + b, 0) / sizes.length;
      expect(Math.abs(mean - 2 * MiB)).toBeLessThan(8 * 1024);
    } finally {
      await node.stop();
    }
  });
});
