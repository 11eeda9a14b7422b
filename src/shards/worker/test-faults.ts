/**
 * TEST-ONLY fault injection for the storage fault tests (test/storage/worker-faults.test.ts).
 *
 * Armed only when BOTH are set in the node's environment: `NODE_ENV=test` (jest sets it; a
 * production deployment never should) and `SVC_TEST_FAULTS_FILE`, the path of a file the test
 * controls. Otherwise this does nothing and reads nothing. While armed, each index or log write
 * first reads that file; while it exists, the words in it are the faults in force:
 *
 *   index-write        every RocksDB index write (checkpoints) throws, like an I/O error
 *   log-write-enospc   every segment write fails with ENOSPC, like a full disk
 *
 * Deleting the file ends the faults. Not a setting: docs/operations.md mentions it only to say so.
 */
import * as fs from 'node:fs';
import { type KvStore } from './kv-store';
import { type SegmentLog } from './segment-log';

type Fault = 'index-write' | 'log-write-enospc';

function faultsFile(): string | null {
  if (process.env['NODE_ENV'] !== 'test') return null;
  const f = process.env['SVC_TEST_FAULTS_FILE'];
  return f === undefined || f === '' ? null : f;
}

function active(file: string, fault: Fault): boolean {
  try {
    return fs.readFileSync(file, 'utf8').split(/\s+/).includes(fault);
  } catch {
    return false;
  }
}

/** Wrap one shard's store and log with the faults named in the test's file (no-op unless armed). */
export function armTestFaults(store: KvStore, log: SegmentLog): void {
  const file = faultsFile();
  if (file === null) return;
  const write = store.write.bind(store);
  store.write = (ops, sync): void => {
    if (active(file, 'index-write')) throw new Error('IO error: injected index write failure (test fault hook)');
    write(ops, sync);
  };
  const logWrite = log.write.bind(log);
  log.write = (bufs, options) => {
    if (!active(file, 'log-write-enospc')) return logWrite(bufs, options);
    const err: NodeJS.ErrnoException = new Error('ENOSPC: no space left on device, write (test fault hook)');
    err.code = 'ENOSPC';
    return Promise.reject(err);
  };
}
