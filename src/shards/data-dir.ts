/**
 * The node's data directory:
 *
 *   <dataDir>/svc.lock               held (flock) by the one process using the directory (data-dir-lock.ts)
 *   <dataDir>/svc-node.json          format version and shard count, written once
 *   <dataDir>/shards/<k>/log/        segment files of shard k
 *   <dataDir>/shards/<k>/index/      RocksDB catalog and chunk index of shard k
 *   <dataDir>/schemas/<name>.json    one registered schema each (schema-store.ts)
 *
 * The shard count is fixed when the directory is first used: streams are placed by
 * hashing, so changing it would move them. The worker count is free to change.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const FILE = 'svc-node.json';
const FORMAT = 1;

export interface DataDirInfo {
  shardCount: number;
  /** The configured count differed and the stored one was kept. */
  keptStoredShardCount: boolean;
}

export function initDataDir(dataDir: string, requestedShards: number): DataDirInfo {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, FILE);
  if (fs.existsSync(file)) {
    let stored: { format: number; shards: number };
    try {
      stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { format: number; shards: number };
      if (!Number.isInteger(stored.shards) || stored.shards < 1) throw new Error('no shard count');
    } catch (err) {
      // Written once, atomically: a damaged one was changed outside the node. Its shard count decides where every stream lives.
      throw new Error(
        `${file} cannot be read (${(err as Error).message}); restore it from a backup, or write {"format":${FORMAT},"shards":<n>} with n = the number of directories under ${path.join(dataDir, 'shards')}`,
        { cause: err },
      );
    }
    if (stored.format !== FORMAT) throw new Error(`${file}: data format ${stored.format} is not supported by this build (expects ${FORMAT})`);
    return { shardCount: stored.shards, keptStoredShardCount: stored.shards !== requestedShards };
  }
  const tmp = file + '.tmp';
  fs.writeFileSync(tmp, JSON.stringify({ format: FORMAT, shards: requestedShards }) + '\n');
  const fd = fs.openSync(tmp, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  return { shardCount: requestedShards, keptStoredShardCount: false };
}
