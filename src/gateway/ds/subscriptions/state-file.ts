/**
 * The subscription state file: one JSON document holding the signing key, the callback-token
 * key and every subscription with its acked offsets. It is replaced atomically (write a temp
 * file, fsync it, rename it over the old one, fsync the directory), so a crash leaves either
 * the old or the new document.
 *
 * Saves coalesce: a save asked for while one is being written waits for it and then writes
 * once for every request that arrived meanwhile. The document is built when its write starts,
 * so it holds every change made before the save was asked for.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type JsonWebKey } from 'node:crypto';
import { type Logger } from '../../../log';
import { type SubscriptionState } from './subscription';

export interface PersistedState {
  version: 1;
  /** The Ed25519 private key as a JWK. */
  signingKey: JsonWebKey;
  /** The callback-token HMAC key, base64url. */
  tokenKey: string;
  subscriptions: SubscriptionState[];
}

/** The saved state, or null when there is none yet. A file that is not ours throws: starting empty would lose subscriptions. */
export function loadState(file: string): PersistedState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const state = JSON.parse(text) as Partial<PersistedState>;
  if (state.version !== 1 || typeof state.signingKey !== 'object' || typeof state.tokenKey !== 'string' || !Array.isArray(state.subscriptions)) {
    throw new Error(`${file} is not a version 1 subscription state file`);
  }
  return state as PersistedState;
}

export class StateWriter {
  readonly #file: string;
  readonly #build: () => PersistedState;
  readonly #log: Logger;
  /** The write in progress (settled when idle); never rejects. */
  #current: Promise<void> = Promise.resolve();
  /** The write that will start after it, shared by every save asked for meanwhile. */
  #next: Promise<void> | null = null;

  constructor(file: string, build: () => PersistedState, log: Logger) {
    this.#file = file;
    this.#build = build;
    this.#log = log;
  }

  /** Resolves once a write holding every change made before this call is durable; rejects if it failed (already logged). */
  save(): Promise<void> {
    if (this.#next) return this.#next;
    const next = this.#current.then(() => {
      this.#next = null;
      return this.#write(JSON.stringify(this.#build()));
    });
    this.#next = next;
    this.#current = next.catch((err: unknown) => {
      this.#log.error({ err, file: this.#file }, 'could not save the subscription state');
    });
    return next;
  }

  /** Resolves when every save asked for so far has finished, whatever its outcome. */
  async flush(): Promise<void> {
    await this.#current;
  }

  async #write(text: string): Promise<void> {
    const dir = dirname(this.#file);
    const tmp = `${this.#file}.tmp`;
    await mkdir(dir, { recursive: true });
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.#file);
    // The rename is durable only once the directory entry is; some file systems refuse to
    // open a directory for sync, and then the rename is as durable as they make it.
    try {
      const d = await open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    } catch {
      // best effort (see above)
    }
  }
}
