/** The segment files of one shard of a node's data directory, in log order (storage tests that damage or remove them). */
import * as fs from 'node:fs';
import * as path from 'node:path';

export function segFiles(dataDir: string, shard = 0): string[] {
  const dir = path.join(dataDir, 'shards', String(shard), 'log');
  return fs
    .readdirSync(dir)
    .sort()
    .map((f) => path.join(dir, f));
}
