/**
 * Source checkpoints (spec "[state]"): `file` storage keeps one file per source, named by key,
 * written as temp file + fdatasync + rename + directory fsync (mode 0600), so a crash leaves the
 * old or the new checkpoint, never a torn one. `http` storage loads with GET <url><key> and saves
 * with PUT <url><key>, an Idempotency-Key per save, retried with backoff; a save that stays
 * ambiguous fails the batch (the caller holds the next batch until a save succeeds).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ConnectorsConfig } from './config-schema';
import { backoff, parseDuration, sleep } from './duration';

export interface StateStore {
  /** The saved checkpoint, or null when there is none. `where` says where it was looked for. */
  load(key: string): Promise<{ state: Buffer | null; where: string }>;
  save(key: string, state: Buffer): Promise<void>;
}

const fileName = (key: string): string => `${key.replace(/[^A-Za-z0-9_.-]/g, '_')}.state`;

export class FileStateStore implements StateStore {
  constructor(readonly dir: string) {}

  async load(key: string): Promise<{ state: Buffer | null; where: string }> {
    const where = path.join(this.dir, fileName(key));
    try {
      return { state: fs.readFileSync(where), where };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: null, where };
      throw new Error(`cannot read checkpoint ${where}: ${(err as Error).message}`, { cause: err });
    }
  }

  async save(key: string, state: Buffer): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    const final = path.join(this.dir, fileName(key));
    const tmp = `${final}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, state);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, final);
    const dfd = fs.openSync(this.dir, 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  }
}

export class HttpStateStore implements StateStore {
  readonly #c: ConnectorsConfig['state']['http'];
  constructor(c: ConnectorsConfig['state']['http']) {
    this.#c = c;
  }

  async #request(method: string, key: string, body?: Buffer, idem?: string): Promise<Response> {
    const headers: Record<string, string> = { ...this.#c.request_headers };
    if (idem !== undefined) headers['idempotency-key'] = idem;
    if (body !== undefined) headers['content-type'] = 'application/octet-stream';
    return fetch(this.#c.url + encodeURIComponent(key), { method: method.toUpperCase(), headers, body, signal: AbortSignal.timeout(parseDuration(this.#c.timeout)!) });
  }

  async load(key: string): Promise<{ state: Buffer | null; where: string }> {
    const where = this.#c.url + encodeURIComponent(key);
    const r = await this.#request(this.#c.load_method, key);
    if (r.status === 404) return { state: null, where };
    if (!r.ok) throw new Error(`checkpoint load ${where}: HTTP ${r.status}`);
    return { state: Buffer.from(await r.arrayBuffer()), where };
  }

  /** One idempotency key for every attempt of this save, so a retried save that had landed is not applied twice. */
  async save(key: string, state: Buffer): Promise<void> {
    const idem = randomUUID();
    const { max_attempts, initial_backoff, max_backoff } = this.#c.retry;
    let last: unknown;
    for (let i = 0; i < max_attempts; i++) {
      try {
        const r = await this.#request(this.#c.save_method, key, state, idem);
        if (r.ok) return;
        last = new Error(`HTTP ${r.status}`);
        if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) break;
      } catch (err) {
        last = err;
      }
      await sleep(backoff(i, parseDuration(initial_backoff)!, parseDuration(max_backoff)!));
    }
    throw new Error(`checkpoint save for ${key} failed: ${(last as Error).message}`);
  }
}

export function createStateStore(c: ConnectorsConfig['state']): StateStore {
  return c.storage === 'http' ? new HttpStateStore(c.http) : new FileStateStore(c.path);
}
