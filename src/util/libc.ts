/**
 * The C library calls Node has no binding for, through koffi (the only file besides the
 * connector runtime's ffi.ts that imports it): flock(2) for file locks (file-lock.ts) and glibc's
 * malloc_trim(3) for giving freed heap memory back (malloc-trim.ts); fcntl(2) to duplicate a
 * socket handed to another thread (dupFd); and linkat(2) to name a file opened unnamed (fdLinker:
 * the file object store's create-only puts).
 */
import * as koffi from 'koffi';

/** EINTR and EWOULDBLOCK (= EAGAIN) as this platform numbers them. */
export const ERRNO = {
  interrupted: 4,
  wouldBlock: process.platform === 'linux' ? 11 : 35,
} as const;

let lib: ReturnType<typeof koffi.load> | null = null;

function libc(): ReturnType<typeof koffi.load> {
  if (lib !== null) return lib;
  const name = process.platform === 'darwin' ? 'libSystem.B.dylib' : process.platform === 'linux' ? 'libc.so.6' : process.platform === 'freebsd' ? 'libc.so.7' : null;
  if (name === null) throw new Error(`the C library is not known on ${process.platform}`);
  lib = koffi.load(name);
  return lib;
}

let flockFn: ((fd: number, op: number) => number) | null = null;

/** flock(2): 0 on success, -1 with `errno()` set. */
export function flock(fd: number, op: number): number {
  if (flockFn === null) {
    const f = libc().func('int flock(int fd, int operation)');
    flockFn = (d, o) => f(d, o) as number;
  }
  return flockFn(fd, op);
}

export const errno = (): number => koffi.errno();

type AsyncTrim = (pad: number, done: (err: unknown, released: number) => void) => void;
let trimFn: AsyncTrim | null | undefined;

/**
 * glibc's malloc_trim(0) on a thread of libuv's pool (not the caller's event loop): hands every
 * whole free page of every malloc arena back to the kernel. Resolves true when some memory was
 * released, false when none was; null where the C library has no malloc_trim (macOS, musl).
 */
export function mallocTrim(): Promise<boolean | null> {
  if (trimFn === undefined) {
    try {
      const f = libc().func('int malloc_trim(size_t pad)');
      trimFn = (pad, done) => f.async(pad, done);
    } catch {
      trimFn = null;
    }
  }
  const fn = trimFn;
  if (fn === null) return Promise.resolve(null);
  return new Promise((resolve, reject) => fn(0, (err, released) => (err == null ? resolve(released === 1) : reject(err instanceof Error ? err : new Error(String(err))))));
}

let setNameFn: ((name: string) => number) | null | undefined;

/**
 * Names the calling thread for the kernel (pthread_setname_np: at most 15 bytes; shown by `top -H`,
 * `ps -T` and /proc/<pid>/task/<tid>/comm), so per-thread CPU can be told apart (perf/scaling.js).
 * Best effort: false where the C library cannot.
 */
export function nameThread(name: string): boolean {
  if (setNameFn === undefined) {
    try {
      const self = libc().func('unsigned long pthread_self()');
      const set = libc().func('int pthread_setname_np(unsigned long thread, const char *name)');
      setNameFn = (n) => set(self(), n) as number;
    } catch {
      setNameFn = null;
    }
  }
  if (setNameFn === null) return false;
  try {
    return setNameFn(name.slice(0, 15)) === 0;
  } catch {
    return false;
  }
}

let dupFn: ((fd: number) => number) | null = null;

/**
 * A second descriptor of the open file `fd` (close-on-exec on Linux and macOS, as libuv opens its
 * own): what lets a socket accepted on one thread be served by another (kafka-wire/server.ts)
 * while the first thread closes its handle. Throws with the errno when the call fails.
 */
export function dupFd(fd: number): number {
  if (dupFn === null) {
    const cmd = process.platform === 'linux' ? 1030 : process.platform === 'darwin' ? 67 : null; // F_DUPFD_CLOEXEC
    if (cmd === null) {
      const d = libc().func('int dup(int oldfd)');
      dupFn = (f) => d(f) as number;
    } else {
      const fcntl = libc().func('int fcntl(int fd, int cmd, ...)');
      dupFn = (f) => fcntl(f, cmd, 'int', 0) as number;
    }
  }
  const copy = dupFn(fd);
  if (copy < 0) throw new Error(`dup of descriptor ${fd} failed (errno ${errno()})`);
  return copy;
}

/** linkat(2) by descriptor (fdLinker). */
export type FdLinker = (fd: number, dirFd: number, name: string) => number;

let linkFdFn: FdLinker | null | undefined;

/**
 * What gives the unnamed file open as `fd` (opened with O_TMPFILE) the name `name` in the
 * directory open as `dirFd`: linkat(2) of `/proc/self/fd/<fd>` with AT_SYMLINK_FOLLOW, the way to
 * link a file by its descriptor without CAP_DAC_READ_SEARCH; it returns 0 when linked, else the
 * errno (EEXIST: the name exists). Null where this is not Linux or the C library cannot be loaded
 * (then there is no unnamed file to name either).
 */
export function fdLinker(): FdLinker | null {
  if (linkFdFn === undefined) {
    linkFdFn = null;
    if (process.platform === 'linux') {
      try {
        const f = libc().func('int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)');
        const AT_FDCWD = -100;
        const AT_SYMLINK_FOLLOW = 0x400;
        linkFdFn = (src, dir, n) => ((f(AT_FDCWD, `/proc/self/fd/${src}`, dir, n, AT_SYMLINK_FOLLOW) as number) === 0 ? 0 : errno());
      } catch {
        linkFdFn = null;
      }
    }
  }
  return linkFdFn;
}
