/**
 * An advisory, exclusive lock on an open file: flock(2) through koffi (the only file besides
 * the connector runtime's ffi.ts that imports it). Node has no flock of its own; a lock file
 * made with O_EXCL would outlive a process killed with SIGKILL, while the kernel drops a flock
 * when its holder's last descriptor of the file closes, however the process ends.
 *
 * A flock belongs to the open file description: two descriptors of one file opened separately,
 * even in one process, exclude each other (callers keep one descriptor per file and process).
 */
import * as koffi from 'koffi';

const LOCK_EX = 2;
const LOCK_NB = 4;
/** EWOULDBLOCK (= EAGAIN): Linux 11, the BSDs and macOS 35. */
const WOULD_BLOCK = process.platform === 'linux' ? 11 : 35;
/** EINTR: the same number everywhere flock exists. */
const INTERRUPTED = 4;

let flock: ((fd: number, op: number) => number) | null = null;

function libc(): (fd: number, op: number) => number {
  if (flock !== null) return flock;
  const name = process.platform === 'darwin' ? 'libSystem.B.dylib' : process.platform === 'linux' ? 'libc.so.6' : process.platform === 'freebsd' ? 'libc.so.7' : null;
  if (name === null) throw new Error(`file locks (flock) are not supported on ${process.platform}`);
  const f = koffi.load(name).func('int flock(int fd, int operation)');
  flock = (fd, op) => f(fd, op) as number;
  return flock;
}

/**
 * Take an exclusive flock on `fd` without waiting: true when taken, false when another open
 * file description holds it. Any other failure throws with its errno.
 */
export function tryLockExclusive(fd: number): boolean {
  const f = libc();
  for (;;) {
    if (f(fd, LOCK_EX | LOCK_NB) === 0) return true;
    const errno = koffi.errno();
    if (errno === INTERRUPTED) continue;
    if (errno === WOULD_BLOCK) return false;
    throw new Error(`flock failed with errno ${errno}`);
  }
}
