/**
 * TEST-ONLY fault hook (the storage fault tests, test/storage/worker-faults.test.ts; the object
 * maintenance thread's, test/cluster/maintenance-thread.test.ts; a drop held past a stream's
 * return, test/cluster/transfer.test.ts).
 *
 * Armed only when BOTH are set in the node's environment: `NODE_ENV=test` (jest sets it; a
 * production deployment never should) and `SVC_TEST_FAULTS_FILE`, the path of a file the test
 * controls. Otherwise it reads nothing and answers false. While armed, each question reads that
 * file: while it exists, the words in it are the faults in force; deleting it ends them. Not a
 * setting: docs/operations.md mentions it only to say so.
 */
import * as fs from 'node:fs';

/** The test's faults file when the hook is armed, else null. */
export function testFaultsFile(): string | null {
  if (process.env['NODE_ENV'] !== 'test') return null;
  const file = process.env['SVC_TEST_FAULTS_FILE'];
  return file === undefined || file === '' ? null : file;
}

/** True when armed and `fault` is one of the words in the test's file now. */
export function testFault(fault: string): boolean {
  const file = testFaultsFile();
  if (file === null) return false;
  try {
    return fs.readFileSync(file, 'utf8').split(/\s+/).includes(fault);
  } catch {
    return false;
  }
}
