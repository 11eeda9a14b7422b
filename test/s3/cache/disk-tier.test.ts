import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { DiskTier, DiskWriter } from '../../../src/s3/cache/disk-tier';
import { type ObjectMeta } from '../../../src/s3/cache/entry';

const meta: ObjectMeta = { size: 4, etag: '"e"', lastModified: 'Tue, 24 Nov 2026 00:00:00 GMT', headers: {} };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-disk-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the disk tier', () => {
  it('closes a writer whose writes failed when it is committed, and leaves no temporary file', async () => {
    const tier = new DiskTier(dir, 1024 * 1024);
    await tier.open();
    const tmp = path.join(dir, 'tmp', 'broken');
    fs.writeFileSync(tmp, '');
    // Opened read-only: every write fails (EBADF), as on a full or failing disk.
    const fh = await fsp.open(tmp, 'r');
    const w = new DiskWriter(tmp, fh);
    w.write(Buffer.from('abcd'));
    await expect(tier.commit('b\0k', 'b', 'k', meta, 0, w)).rejects.toThrow();
    expect(fh.fd).toBe(-1); // closed, not left to the garbage collector
    expect(fs.existsSync(tmp)).toBe(false);
    expect(tier.get('b\0k')).toBeUndefined();
    await w.abort(); // a second way out after the first closes nothing twice
  });

  it('commits a writer and indexes the object again after a restart', async () => {
    const tier = new DiskTier(dir, 1024 * 1024);
    await tier.open();
    const w = await tier.create();
    w.write(Buffer.from('abcd'));
    await tier.commit('b\0k', 'b', 'k', meta, 5, w);
    expect(tier.get('b\0k')?.meta.etag).toBe('"e"');
    const again = new DiskTier(dir, 1024 * 1024);
    expect(await again.open()).toBe(1);
    expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
  });
});
