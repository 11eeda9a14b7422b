/**
 * For suites that assert a latency bound on a whole cluster on this machine (the failover
 * rounds' 10 s, the transfers' p99): `runAlone()`, called before the suite's other hooks, takes
 * one machine-wide lock for the suite's run, so no two of them run at once. Jest runs two suites
 * at a time; two 3-node clusters with 3 etcd members and 16 clients each on a 2-core CI worker
 * measured each other more than the product. Every other suite runs beside them as usual, and
 * test/helpers/sequencer.js spreads these over the run so that they seldom wait for each other.
 *
 * The lock is a flock on a file in the temporary directory (src/util/file-lock.ts): the kernel
 * drops it however the holder ends, so a killed run leaves nothing behind.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tryLockExclusive } from '../../src/util/file-lock';

const LOCK = path.join(os.tmpdir(), 'svc-tests-cluster-timing.lock');

/** How long a suite may wait for the others (each of them takes 1–5 minutes). */
const WAIT_MS = 30 * 60_000;

export function runAlone(): void {
  let fd: number | null = null;
  beforeAll(async () => {
    fd = fs.openSync(LOCK, 'a');
    const end = Date.now() + WAIT_MS;
    while (!tryLockExclusive(fd)) {
      if (Date.now() > end) throw new Error(`runAlone: ${LOCK} still held after ${WAIT_MS / 60_000} minutes`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, WAIT_MS + 60_000);
  afterAll(() => {
    if (fd !== null) fs.closeSync(fd);
  });
}
