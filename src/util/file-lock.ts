/**
 * An advisory, exclusive lock on an open file: flock(2) (libc.ts). Node has no flock of its own; a lock file
 * made with O_EXCL would outlive a process killed with SIGKILL, while the kernel drops a flock
 * when its holder's last descriptor of the file closes, however the process ends.
 *
 * A flock belongs to the open file description: two descriptors of one file opened separately,
 * even in one process, exclude each other (callers keep one descriptor per file and process).
 */
import { ERRNO, errno, flock } from './libc';

const LOCK_EX = 2;
const LOCK_NB = 4;

/**
 * Take an exclusive flock on `fd` without waiting: true when taken, false when another open
 * file description holds it. Any other failure throws with its errno.
 */
export function tryLockExclusive(fd: number): boolean {
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
    const e = errno();
    if (e === ERRNO.interrupted) continue;
    if (e === ERRNO.wouldBlock) return false;
    throw new Error(`flock failed with errno ${e}`);
  }
}
