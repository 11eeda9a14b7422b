/**
 * The object store, checked once when a node starts in objects mode: a small object is written,
 * read back and deleted under `_svc/check/` (a prefix the reaper never lists; the object is this
 * node start's own). A store that refuses for good — credentials it does not accept, a bucket that
 * does not exist or lives in another region, a file store whose directory is missing or read-only,
 * an endpoint that does not speak HTTP — stops the start with the store's own words, instead of a
 * node that looks healthy while every append waits for the store and fails after 5 s. A store that
 * does not answer (down, unreachable, answering 5xx, slow) is not a configuration error: the node
 * starts with a warning, and appends wait for the store as they would at any other time.
 */
import { randomBytes } from 'node:crypto';
import { type ObjectStore, ObjectStoreError } from './object-store';

/** `refused`: the store answered and refused (the node must not start); otherwise no usable answer in time (it starts, and says so). */
export type StoreCheck = { ok: true } | { ok: false; refused: boolean; code: string; message: string };

/** How long the check may take before the node starts without it (ms). */
export const STORE_CHECK_MS = 10_000; // 10 s

/** File store codes that only a change of configuration (or of the file system) can cure. */
const FILE_REFUSALS = new Set(['NoSuchStore', 'EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR']);

/** Whether a failed request is the store refusing (for good) rather than not answering. */
export function isRefusal(err: unknown): boolean {
  if (!(err instanceof ObjectStoreError)) return false;
  // 3xx: S3's PermanentRedirect (the bucket lives in another region or at another endpoint); 4xx but
  // a timeout or a throttle: credentials, bucket, permissions.
  if (err.status !== undefined) return err.status >= 300 && err.status < 500 && err.status !== 408 && err.status !== 429;
  // No HTTP status: a file store's error, or an S3 request with no answer (Unreachable) or an answer that was not S3's.
  return FILE_REFUSALS.has(err.code) || err.code === 'InvalidResponse';
}

/** Write, read back and delete one small object; `tag` names it (node id and start). */
export async function checkObjectStore(store: ObjectStore, tag: string, timeoutMs = STORE_CHECK_MS): Promise<StoreCheck> {
  const key = `_svc/check/${tag}.${randomBytes(4).toString('hex')}`;
  const body = Buffer.from(`svc object store check ${key}\n`);
  const run = (async (): Promise<StoreCheck> => {
    await store.put(key, body);
    const back = await store.get(key);
    if (!back.equals(body)) {
      return { ok: false, refused: true, code: 'Mismatch', message: `object store ${store.describe}: ${JSON.stringify(key)} read back ${back.length} bytes that differ from the ${body.length} written` };
    }
    await store.delete(key);
    return { ok: true };
  })().catch((err: unknown): StoreCheck => {
    const code = err instanceof ObjectStoreError ? err.code : 'Error';
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, refused: isRefusal(err), code, message };
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<StoreCheck>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, refused: false, code: 'Timeout', message: `object store ${store.describe}: no answer to a test object within ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}
