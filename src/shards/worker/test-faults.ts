/**
 * TEST-ONLY fault injection for the storage fault tests (test/storage/worker-faults.test.ts),
 * through the test fault hook (src/util/test-fault.ts: inert unless `NODE_ENV=test` and
 * `SVC_TEST_FAULTS_FILE` are both set). Faults a shard's writes honour:
 *
 *   index-write        every RocksDB index write (checkpoints) throws, like an I/O error
 *   log-write-enospc   every segment write fails with ENOSPC, like a full disk
 */
import { testFault, testFaultsFile } from '../../util/test-fault';
import { type KvStore } from './kv-store';
import { type SegmentLog } from './segment-log';

/** Wrap one shard's store and log with the faults named in the test's file (no-op unless armed). */
export function armTestFaults(store: KvStore, log: SegmentLog): void {
  if (testFaultsFile() === null) return;
  const write = store.write.bind(store);
  store.write = (ops, sync): void => {
    if (testFault('index-write')) throw new Error('IO error: injected index write failure (test fault hook)');
    write(ops, sync);
  };
  const logWrite = log.write.bind(log);
  log.write = (bufs, options) => {
    if (!testFault('log-write-enospc')) return logWrite(bufs, options);
    const err: NodeJS.ErrnoException = new Error('ENOSPC: no space left on device, write (test fault hook)');
    err.code = 'ENOSPC';
    return Promise.reject(err);
  };
}
