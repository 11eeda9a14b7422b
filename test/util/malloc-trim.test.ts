/**
 * malloc_trim through koffi (util/libc.ts, util/malloc-trim.ts): free blocks in the middle of the C
 * heap are given back to the kernel, so an idle node does not keep what a busy minute took.
 */
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { mallocTrim } from '../../src/util/libc';
import { startMallocTrim } from '../../src/util/malloc-trim';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const rss = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
const glibc = process.platform === 'linux' && (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;

(glibc ? describe : describe.skip)('malloc trim', () => {
  it('gives back the free blocks left between live ones', async () => {
    // 64 MiB in 16 KiB blocks (below the mmap threshold: they live in the heap), every other one freed.
    const blocks: Array<Buffer | null> = Array.from({ length: 4096 }, () => Buffer.allocUnsafeSlow(16 * 1024).fill(1));
    for (let i = 0; i < blocks.length; i += 2) blocks[i] = null;
    gc();
    gc();
    // The freed ArrayBuffers' memory goes back to malloc once V8's sweeper has run.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = rss();
    expect(await mallocTrim()).toBe(true);
    const after = rss();
    expect(before - after).toBeGreaterThan(8 * MiB);
    expect(blocks[1]![0]).toBe(1);
  });

  it('runs on a timer that stops', async () => {
    const t = startMallocTrim(10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.stop();
    expect(await mallocTrim()).not.toBeNull();
  });
});
