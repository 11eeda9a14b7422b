/** The file: object store: the shared contract, and what only a directory shows (atomic, durable puts; leftovers). */
import * as crypto from 'node:crypto';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ObjectStoreError, newObjectStoreStats, openObjectStore } from '../../src/objects';
import { FileObjectStore } from '../../src/objects/file-store';
import { OPEN_DIRS_MAX } from '../../src/objects/open-dirs';
import { objectStoreContract } from './contract';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-objects-'));
  dirs.push(d);
  return d;
}

/** This process's open descriptors that are directories under `dir`. */
function openDirsUnder(dir: string): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (readdir's own descriptor)
    }
    if (target.startsWith(`${dir}/`) && fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() === true) n++;
  }
  return n;
}

/** Every file under `dir`, relative, dot files included. */
function allFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

describe('file: object store', () => {
  // The plain store, and a blocking one (every call's I/O on the calling thread).
  describe.each([false, true])('contract, blocking %s', (blocking) => {
    let dir = '';
    objectStoreContract({
      pages: false,
      open: async (o) => {
        if (o.pageSize === undefined || dir === '') dir = tempDir();
        return openObjectStore(`file:${dir}`, { stats: o.stats, blocking });
      },
    });
  });

  it('a blocking store works while the thread pool is busy; a plain one\'s delete waits for the pool', async () => {
    const dir = tempDir();
    const blocking = openObjectStore(`file:${dir}`, { blocking: true });
    const plain = openObjectStore(`file:${dir}`);
    await plain.put('x/plain', Buffer.from('p'));
    // Every thread of the pool busy for a while, one job each (libuv's default pool has 4 threads).
    const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    let poolFree = false; // a pool thread done with its job
    const busy = Promise.all(Array.from({ length: size }, () => new Promise((r) => crypto.pbkdf2('pw', 'salt', 1_500_000, 32, 'sha512', () => r((poolFree = true))))));
    const big = randomBytes(200 << 10); // above the size plain stores write on the pool
    await blocking.put('x/fresh', big, { fresh: true });
    await blocking.put('x/once', Buffer.from('o'), { ifAbsent: true });
    await blocking.put('x/plain-put', Buffer.from('q'));
    expect((await blocking.get('x/fresh')).equals(big)).toBe(true);
    expect((await blocking.get('x/fresh', { offset: 1000, length: 100 << 10 })).equals(big.subarray(1000, 1000 + (100 << 10)))).toBe(true);
    const listed: string[] = [];
    for await (const o of blocking.list('x/')) listed.push(o.key);
    expect(listed).toEqual(['x/fresh', 'x/once', 'x/plain', 'x/plain-put']);
    await blocking.delete('x/once');
    expect(poolFree).toBe(false);
    // The same delete through a plain store waits for a pool thread.
    await plain.delete('x/plain');
    expect(poolFree).toBe(true);
    await busy;
    await blocking.close();
    await plain.close();
  });

  it('stores each object as one file at <dir>/<key>, complete once put resolves, with no temporary file left', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    const body = Buffer.alloc(3 * 1024 * 1024, 0x5a);
    await store.put('g/7/3/2/000000000042', [body.subarray(0, 1000), body.subarray(1000)]);
    expect(fs.readFileSync(path.join(dir, 'g', '7', '3', '2', '000000000042')).equals(body)).toBe(true);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put('g/7/3/2/same', Buffer.alloc(1000 + i, i))));
    const same = fs.readFileSync(path.join(dir, 'g', '7', '3', '2', 'same'));
    expect(same.every((b) => b === same.length - 1000)).toBe(true); // one whole writer's bytes, never a mix
    expect(allFiles(dir).sort()).toEqual(['g/7/3/2/000000000042', 'g/7/3/2/same']);
    await store.close();
  });

  it('never shows a partly written object: the name appears with all its bytes at once', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    const file = path.join(dir, 'big', 'object');
    const size = 48 * 1024 * 1024;
    const sizesSeen = new Set<number>();
    const done = store.put('big/object', Buffer.alloc(size, 1));
    let finished = false;
    void done.then(() => (finished = true));
    while (!finished) {
      try {
        sizesSeen.add(fs.statSync(file).size);
      } catch {
        // not there yet
      }
      await new Promise((r) => setImmediate(r));
    }
    await done;
    sizesSeen.add(fs.statSync(file).size);
    expect([...sizesSeen]).toEqual([size]);
    await store.close();
  });

  it('writes a fresh key in place: the object\'s bytes under its own name once put resolves, no temporary file; a second put of it (a retry) replaces them whole', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    const body = Buffer.alloc(200 * 1024, 0x33);
    await store.put('g/1/2/0/000000000001', [body.subarray(0, 7), body.subarray(7)], { fresh: true });
    const file = path.join(dir, 'g', '1', '2', '0', '000000000001');
    expect(fs.readFileSync(file).equals(body)).toBe(true);
    expect(allFiles(dir)).toEqual(['g/1/2/0/000000000001']);
    await store.put('g/1/2/0/000000000001', Buffer.from('shorter'), { fresh: true });
    expect(fs.readFileSync(file).toString()).toBe('shorter');
    expect((await store.get('g/1/2/0/000000000001', { offset: 1, length: 3 })).toString()).toBe('hor');
    await store.close();
  });

  it('reads small ranges on the calling thread and large ones on the thread pool, both exactly, both refusing a range past the end', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    const body = randomBytes(300 * 1024);
    await store.put('c/1/big', body);
    for (const [offset, length] of [[5, 4000], [1000, 64 * 1024], [1000, 64 * 1024 + 1], [7, 299 * 1024]] as const) {
      expect((await store.get('c/1/big', { offset, length })).equals(body.subarray(offset, offset + length))).toBe(true);
    }
    for (const length of [100, 200 * 1024]) {
      await expect(store.get('c/1/big', { offset: body.length - 50, length })).rejects.toMatchObject({ code: 'InvalidRange' });
    }
    await store.close();
  });

  it.each([
    ['unnamed (O_TMPFILE, on Linux)', true],
    ['named', false],
  ])('puts create-only with %s temporary files: of puts of one key exactly one creates it, the others fail PreconditionFailed and leave its bytes; temporary files opened ahead are used, and removed on close when unused', async (_, unnamedTmp) => {
    const dir = tempDir();
    const store = new FileObjectStore(dir, undefined, { unnamedTmp });
    expect(store.createOnly).toBe(true);
    const key = (n: number): string => `g/1/2/0/${String(n).padStart(12, '0')}`;
    await store.put(key(9), Buffer.from('first'), { ifAbsent: true }); // makes the directory
    store.prepare!([key(0), key(1), key(2)]);
    // Opened ahead as temporary files: not objects, not listed.
    const listed = async (): Promise<string[]> => {
      const out: string[] = [];
      for await (const o of store.list('g/')) out.push(o.key);
      return out;
    };
    expect(await listed()).toEqual([key(9)]);
    // Unnamed ones have no name to see, and none to leave behind after a crash.
    expect(allFiles(dir).filter((f) => path.basename(f).startsWith('.'))).toHaveLength(unnamedTmp && process.platform === 'linux' ? 0 : 3);
    // Eight puts of key 0 at once, different bytes each: one wins, whole.
    const bodies = Array.from({ length: 8 }, (_, i) => Buffer.from(`body-${i}-`.repeat(100 + i)));
    const outcomes = await Promise.allSettled(bodies.map((b) => store.put(key(0), b, { ifAbsent: true })));
    const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'PreconditionFailed', op: 'put', key: key(0) });
    await expect(store.get(key(0))).resolves.toEqual(bodies[won[0]!]);
    // A key that exists keeps its bytes (a fence marker stays one).
    await expect(store.put(key(9), Buffer.from('second'), { ifAbsent: true })).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await expect(store.get(key(9))).resolves.toEqual(Buffer.from('first'));
    await store.put(key(1), [Buffer.from('ab'), Buffer.from('cd')], { ifAbsent: true });
    await expect(store.get(key(1))).resolves.toEqual(Buffer.from('abcd'));
    // Key 2 was never put: close removes its temporary file; no other is left behind.
    await store.close();
    expect(allFiles(dir).sort()).toEqual([key(0), key(1), key(9)]);
  });

  it('skips a temporary file a crash left behind, in listings and gets', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    await store.put('c/1/0000000001.000000000000', Buffer.from('x'));
    fs.writeFileSync(path.join(dir, 'c', '1', '.0000000001.000000000001.abcdef.tmp'), 'torn');
    const keys: string[] = [];
    for await (const o of store.list('c/')) keys.push(o.key);
    expect(keys).toEqual(['c/1/0000000001.000000000000']);
    await store.close();
  });

  it('refuses a key whose name is already a directory of other keys, with a clear error', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`);
    await store.put('k/a/b', Buffer.from('x'));
    const err = await store.put('k/a', Buffer.from('y')).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStoreError);
    expect((err as ObjectStoreError).message).toMatch(/cannot also be the directory/);
    await expect(store.get('k/a')).rejects.toMatchObject({ code: 'NoSuchKey' });
    await store.delete('k/a');
    expect(fs.readFileSync(path.join(dir, 'k', 'a', 'b'), 'utf8')).toBe('x');
    await store.close();
  });

  it('never creates its own directory: a missing one (an unmounted share) fails every operation with NoSuchStore', async () => {
    const missing = path.join(tempDir(), 'not-mounted');
    const store = openObjectStore(`file:${missing}`);
    for (const call of [() => store.put('a/b', Buffer.from('x')), () => store.get('a/b'), () => store.delete('a/b'), async () => {
      for await (const _ of store.list('')) void _;
    }]) {
      const err = await call().then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ObjectStoreError);
      expect((err as ObjectStoreError).code).toBe('NoSuchStore');
      expect((err as ObjectStoreError).message).toContain(`${missing}: the directory does not exist`);
    }
    expect(fs.existsSync(missing)).toBe(false);
  });

  // Compacted objects go to a directory per stream: a descriptor kept for each one grew with the
  // number of streams compacted on the node (some 1,000 after a minute of W2) towards EMFILE.
  it.each([false, true])('keeps at most OPEN_DIRS_MAX directories open however many its puts go to, none closed under a put (blocking %s)', async (blocking) => {
    const dir = fs.realpathSync(tempDir());
    const store = openObjectStore(`file:${dir}`, { blocking });
    const streams = OPEN_DIRS_MAX * 3;
    // All at once, so that more directories than the bound are in use together.
    await Promise.all(Array.from({ length: streams }, (_, i) => store.put(`c/${i}/0000000001.000000000001`, Buffer.from(`stream ${i}`), { ifAbsent: true })));
    expect(openDirsUnder(dir)).toBeLessThanOrEqual(OPEN_DIRS_MAX);
    for (let i = 0; i < streams; i++) await store.put(`c/${i}/0000000001.000000000002`, Buffer.from(`again ${i}`), { fresh: true });
    expect(openDirsUnder(dir)).toBeLessThanOrEqual(OPEN_DIRS_MAX);
    for (let i = 0; i < streams; i++) {
      expect((await store.get(`c/${i}/0000000001.000000000001`)).toString()).toBe(`stream ${i}`);
      expect((await store.get(`c/${i}/0000000001.000000000002`)).toString()).toBe(`again ${i}`);
    }
    await store.close();
    expect(openDirsUnder(dir)).toBe(0);
  });

  it('counts a listing the caller stops early as a good one', async () => {
    const stats = newObjectStoreStats();
    const store = openObjectStore(`file:${tempDir()}`, { stats });
    await store.put('l/1', Buffer.from('1'));
    await store.put('l/2', Buffer.from('2'));
    for await (const o of store.list('l/')) if (o.key === 'l/1') break;
    expect(stats.list).toMatchObject({ ok: 1, errors: 0 });
  });

  it('opens relative directories against the working directory and reports a store it cannot write', async () => {
    const store = openObjectStore('file:relative/objects');
    expect(store.describe).toBe(`file:${path.resolve('relative/objects')}`);
    const ro = tempDir();
    fs.chmodSync(ro, 0o500);
    const locked = openObjectStore(`file:${ro}`);
    const err = await locked.put('a/b', Buffer.from('x')).then(() => null, (e: unknown) => e);
    fs.chmodSync(ro, 0o700);
    if (process.getuid?.() !== 0) {
      expect(err).toBeInstanceOf(ObjectStoreError);
      expect((err as ObjectStoreError).code).toBe('EACCES');
      expect((err as ObjectStoreError).message).toContain(ro);
    }
  });

  it('with pruneEmptyDirs, a listing removes the empty directories deleted objects left once they are a minute old, and a put into one removed meanwhile makes it again', async () => {
    const dir = tempDir();
    const store = openObjectStore(`file:${dir}`, { blocking: true, pruneEmptyDirs: true });
    const plain = openObjectStore(`file:${dir}`); // another node's: it keeps its directories open, and never prunes
    const keys = async (prefix: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const o of store.list(prefix)) out.push(o.key);
      return out;
    };
    const age = (rel: string): void => {
      const old = new Date(Date.now() - 120_000);
      fs.utimesSync(path.join(dir, rel), old, old);
    };
    // A compacted object's stream directory (put in place), a writer's directory (create-only), and one still holding an object.
    await plain.put('c/7/0000000001.000000000001', Buffer.from('c'), { fresh: true });
    await plain.put('g/1/2/0/000000000001', Buffer.from('g'), { ifAbsent: true });
    await plain.put('c/8/0000000001.000000000001', Buffer.from('kept'), { fresh: true });
    await store.delete('c/7/0000000001.000000000001');
    await store.delete('g/1/2/0/000000000001');

    // Empty but changed within the minute: kept.
    expect(await keys('')).toEqual(['c/8/0000000001.000000000001']);
    expect(fs.existsSync(path.join(dir, 'c/7'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'g/1/2/0'))).toBe(true);

    // A minute old: removed, the deepest first (a parent emptied by it goes at a later listing, once it is as old).
    for (const rel of ['c/7', 'g/1/2/0', 'c/8']) age(rel);
    expect(await keys('')).toEqual(['c/8/0000000001.000000000001']);
    expect(fs.existsSync(path.join(dir, 'c/7'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'g/1/2/0'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'c/8'))).toBe(true);
    for (const rel of ['g/1/2', 'g/1']) {
      age(rel);
      await keys('g/');
      expect(fs.existsSync(path.join(dir, rel))).toBe(false);
    }
    // The top-level prefixes and the root stay.
    expect(fs.existsSync(path.join(dir, 'c'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'g'))).toBe(true);

    // The other store still holds those directories open from its puts: its next puts there make them again.
    await plain.put('c/7/0000000001.000000000002', Buffer.from('again'), { fresh: true });
    await plain.put('g/1/2/0/000000000002', Buffer.from('again'), { ifAbsent: true });
    await plain.put('g/1/2/0/000000000003', Buffer.from('again'));
    expect(await keys('')).toEqual(['c/7/0000000001.000000000002', 'c/8/0000000001.000000000001', 'g/1/2/0/000000000002', 'g/1/2/0/000000000003']);
    expect((await plain.get('g/1/2/0/000000000002')).toString()).toBe('again');

    // A directory holding only a temporary file (a put in progress, or a prepared create-only key) is not empty.
    await store.delete('c/7/0000000001.000000000002');
    fs.writeFileSync(path.join(dir, 'c/7/.0000000001.000000000003.abc.tmp'), '');
    age('c/7');
    await keys('c/');
    expect(fs.existsSync(path.join(dir, 'c/7'))).toBe(true);
    await store.close();
    await plain.close();
  });
});
