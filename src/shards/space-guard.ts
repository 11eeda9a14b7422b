/**
 * Disk-full handling (main thread). docs/operations.md, "Disk full", is the operator's side.
 *
 *   normal ──(a shard write fails with ENOSPC, or the node starts with less than a reserve free)──▶ low
 *     ▲        release <dataDir>/space-reserve; shards refuse creates and appends (503
 *     │        storage_unavailable, reason disk_full) and accept deletes and trims, which free space
 *     │                                                                                        │
 *     └──(free space ≥ 2 × reserve on two checks a second apart, every worker up: the reserve is written again)
 *
 * Why a reserve: on a disk that is really full even a DELETE cannot be logged, and a shard
 * cannot reopen its index (RocksDB writes on open), so nothing could free space but an operator.
 * The reserve is a file of `reserveBytes` zeros written when the node starts; giving it back
 * leaves room to recover the shards and to log the deletes and trims that free the rest.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const RESERVE_FILE = 'space-reserve';
/** How often free space is checked while low. */
const POLL_MS = 1000; // 1 s
/** Leave low-space mode only with at least this much free, even without a reserve. */
const MIN_FREE_BYTES = 4 * 1024 * 1024; // 4 MiB

export interface SpaceLog {
  info(o: object, m: string): void;
  error(o: object, m: string): void;
}

export interface SpaceState {
  low: boolean;
  freeBytes: number;
  reserveBytes: number;
}

export class SpaceGuard {
  readonly #dir: string;
  readonly #file: string;
  readonly #reserveBytes: number;
  readonly #log: SpaceLog;
  #low = false;
  #timer: NodeJS.Timeout | null = null;
  #listener: (low: boolean) => void = () => undefined;
  /** Whether free space may be trusted now (no worker between a failure and its restart). */
  #settled: () => boolean = () => true;
  /** Polls in a row that found enough space. */
  #roomy = 0;

  constructor(dataDir: string, reserveBytes: number, log: SpaceLog) {
    this.#dir = dataDir;
    this.#file = path.join(dataDir, RESERVE_FILE);
    this.#reserveBytes = reserveBytes;
    this.#log = log;
  }

  /** At start: keep or write the reserve; with less than a reserve's worth free besides it, start low. */
  open(): void {
    if (this.#freeBytes() < Math.max(this.#reserveBytes, MIN_FREE_BYTES) || !this.#writeReserve()) this.enterLow('the node started on a full disk');
  }

  get low(): boolean {
    return this.#low;
  }

  /**
   * Told of every change (ShardClient passes it to the workers). `settled` says whether every
   * worker is up: a worker that stopped has closed its index, and RocksDB gives back preallocated
   * space on close that it takes again on open, so free space measured then is not real.
   */
  onChange(listener: (low: boolean) => void, settled: () => boolean = () => true): void {
    this.#listener = listener;
    this.#settled = settled;
  }

  state(): SpaceState {
    return { low: this.#low, freeBytes: this.#freeBytes(), reserveBytes: this.#reserveBytes };
  }

  /** Out of space: give the reserve back, refuse growth, and watch for space to come back. */
  enterLow(why: string): void {
    if (this.#low) return;
    this.#low = true;
    this.#roomy = 0;
    fs.rmSync(this.#file, { force: true });
    this.#log.error(
      { dataDir: this.#dir, freeBytes: this.#freeBytes(), reserveBytes: this.#reserveBytes, why },
      'disk full: creates and appends are refused with 503 storage_unavailable (disk_full) until space is free again; deletes and trims are accepted and free space (docs/operations.md, "Disk full")',
    );
    this.#listener(true);
    this.#timer = setInterval(() => this.#poll(), POLL_MS);
    this.#timer.unref();
  }

  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #poll(): void {
    const need = Math.max(2 * this.#reserveBytes, MIN_FREE_BYTES);
    // Two checks in a row with every worker up: one moment of space while a shard reopens is not space.
    this.#roomy = this.#settled() && this.#freeBytes() >= need ? this.#roomy + 1 : 0;
    if (this.#roomy < 2 || !this.#writeReserve()) return;
    this.#roomy = 0;
    this.close();
    this.#low = false;
    this.#log.info({ dataDir: this.#dir, freeBytes: this.#freeBytes(), reserveBytes: this.#reserveBytes }, 'disk space is back: creates and appends are accepted again');
    this.#listener(false);
  }

  /** Write the reserve file (kept when it is whole already); false when the disk refused. */
  #writeReserve(): boolean {
    if (this.#reserveBytes === 0) return true;
    try {
      if (fs.statSync(this.#file, { throwIfNoEntry: false })?.size === this.#reserveBytes) return true;
      const fd = fs.openSync(this.#file, 'w');
      try {
        const chunk = Buffer.alloc(Math.min(this.#reserveBytes, 1024 * 1024));
        for (let off = 0; off < this.#reserveBytes; off += chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, this.#reserveBytes - off), off);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return true;
    } catch {
      fs.rmSync(this.#file, { force: true });
      return false;
    }
  }

  #freeBytes(): number {
    try {
      const s = fs.statfsSync(this.#dir);
      return s.bavail * s.bsize;
    } catch {
      return Number.MAX_SAFE_INTEGER; // unknown: never the reason to refuse writes
    }
  }
}

/** A storage error that means the disk is full (errno ENOSPC, or RocksDB's text for it). */
export function isDiskFull(code: string | null, message: string): boolean {
  return code === 'ENOSPC' || /no space left on device/i.test(message);
}
