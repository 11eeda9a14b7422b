/**
 * The object store's check at a node's start (src/objects/store-check.ts): a store that refuses
 * for good stops the start, one that does not answer only warns. Against real stores (a directory,
 * s3rver behind the signature-checking shim) and, for the answers a real store here cannot be made
 * to give (5xx, a hang, bytes that come back different), stores that give them.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ObjectStore, ObjectStoreError, checkObjectStore, isRefusal, openObjectStore } from '../../src/objects';
import { ORIGIN_ACCESS_KEY, ORIGIN_SECRET_KEY, type TestOrigin, startOrigin } from '../s3/helpers/origin';

const BUCKET = 'svc-check';
const ENV = { AWS_ACCESS_KEY_ID: ORIGIN_ACCESS_KEY, AWS_SECRET_ACCESS_KEY: ORIGIN_SECRET_KEY };
const s3url = (endpoint: string, bucket = BUCKET) => `s3://${bucket}/p?endpoint=${endpoint}&region=us-east-1`;

async function keys(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out;
}

describe('file: store', () => {
  it('passes, and leaves no object behind', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-check-'));
    const store = openObjectStore(`file:${dir}`);
    expect(await checkObjectStore(store, '1.1')).toEqual({ ok: true });
    expect(await keys(store, '')).toEqual([]);
    await store.close();
  });

  it('is refused when the directory does not exist (an unmounted shared file system)', async () => {
    const store = openObjectStore(`file:${path.join(os.tmpdir(), 'svc-check-missing', String(process.pid))}`);
    const r = await checkObjectStore(store, '1.1');
    expect(r).toMatchObject({ ok: false, refused: true, code: 'NoSuchStore' });
    if (!r.ok) expect(r.message).toMatch(/the directory does not exist/);
    await store.close();
  });
});

describe('s3:// store (s3rver)', () => {
  let origin: TestOrigin;
  beforeAll(async () => {
    origin = await startOrigin([BUCKET]);
  });
  afterAll(async () => {
    await origin?.stop();
  });

  it('passes with credentials the store accepts, and leaves no object behind', async () => {
    const store = openObjectStore(s3url(origin.url), { env: ENV });
    expect(await checkObjectStore(store, '2.1')).toEqual({ ok: true });
    expect(await keys(store, '_svc/')).toEqual([]);
    await store.close();
  });

  it('is refused for a bucket that does not exist', async () => {
    const store = openObjectStore(s3url(origin.url, 'no-such-bucket'), { env: ENV });
    expect(await checkObjectStore(store, '2.1')).toMatchObject({ ok: false, refused: true, code: 'NoSuchBucket' });
    await store.close();
  });

  it('is refused for credentials the store does not accept', async () => {
    const store = openObjectStore(s3url(origin.url), { env: { ...ENV, AWS_SECRET_ACCESS_KEY: 'not-the-secret' } });
    const r = await checkObjectStore(store, '2.1');
    expect(r).toMatchObject({ ok: false, refused: true });
    if (!r.ok) expect(r.message).toMatch(/403|Signature/);
    await store.close();
  });

  it('only warns when nothing answers at the endpoint (the store may come up later)', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const store = openObjectStore(s3url(`http://127.0.0.1:${port}`), { env: ENV, s3: { retries: 1, backoffMs: 10, timeoutMs: 1000 } });
    expect(await checkObjectStore(store, '2.1')).toMatchObject({ ok: false, refused: false, code: 'Unreachable' });
    await store.close();
  });
});

describe('answers no store here can be made to give', () => {
  /** A store whose every request fails with `err`, or hangs when `err` is null. */
  function failing(err: ObjectStoreError | null, back?: Buffer): ObjectStore {
    const fail = (): Promise<never> => (err === null ? new Promise<never>(() => undefined) : Promise.reject(err));
    return {
      describe: 'test:',
      createOnly: false,
      put: back === undefined ? fail : async () => undefined,
      get: back === undefined ? fail : async () => back,
      delete: fail,
      list: () => {
        throw new Error('not used');
      },
      close: async () => undefined,
    };
  }

  it('a 5xx, a throttle or a timeout of the store is not a refusal; a 4xx or a redirect to another endpoint is', async () => {
    const e = (code: string, status?: number) => new ObjectStoreError('put', 'k', code, `${code}!`, status);
    expect(await checkObjectStore(failing(e('InternalError', 500)), 't')).toMatchObject({ refused: false, code: 'InternalError' });
    expect(await checkObjectStore(failing(e('SlowDown', 503)), 't')).toMatchObject({ refused: false });
    expect(await checkObjectStore(failing(e('TooManyRequests', 429)), 't')).toMatchObject({ refused: false });
    expect(await checkObjectStore(failing(e('AccessDenied', 403)), 't')).toMatchObject({ refused: true, code: 'AccessDenied' });
    expect(await checkObjectStore(failing(e('PermanentRedirect', 301)), 't')).toMatchObject({ refused: true, code: 'PermanentRedirect' });
    expect(isRefusal(e('EROFS'))).toBe(true);
    expect(isRefusal(e('ENOSPC'))).toBe(false);
    expect(isRefusal(new Error('not a store error'))).toBe(false);
  });

  it('a store that does not answer in time: the check gives up, not refused', async () => {
    const r = await checkObjectStore(failing(null), 't', 50);
    expect(r).toMatchObject({ ok: false, refused: false, code: 'Timeout' });
  });

  it('bytes read back that differ from those written are a refusal', async () => {
    const r = await checkObjectStore(failing(null, Buffer.from('something else')), 't');
    expect(r).toMatchObject({ ok: false, refused: true, code: 'Mismatch' });
  });
});
