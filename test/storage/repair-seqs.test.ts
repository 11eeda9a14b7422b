/**
 * `svc check` and `svc repair` speak of streams and seqs (src/shards/log-check.ts,
 * docs/storage.md): a seq once acknowledged is never handed to another record, even when repair
 * rebuilds an index whose newest segment is lost; a damaged frame is named by stream and seqs, not
 * only by bytes; and a clean stop leaves nothing for `svc check` to call missing.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shardOf } from '../../src/shards/placement';
import { MAIN, ROOT, startNode, tempDir } from '../helpers/node-process';
import { pipelinedBurst } from '../helpers/pipelined-burst';
import { segFiles } from '../helpers/segment-files';

jest.setTimeout(120_000);

const ONE_SHARD = ['--shards', '1', '--shard-workers', '1'];

function svc(args: string[]): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}


const body = (i: number): string => `record-${String(i).padStart(3, '0')}`;

async function fill(url: string, stream: string, n: number): Promise<void> {
  expect((await fetch(url + stream, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  for (let i = 0; i < n; i++) expect((await fetch(url + stream, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: body(i) })).status).toBe(200);
}

async function records(url: string, stream: string): Promise<Array<{ seq: number; body: string }>> {
  const res = await fetch(`${url}${stream}?seq=0&format=json&count=1000`);
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ seq: number; body: string }>;
}

describe('svc repair after the newest segment is lost', () => {
  it('keeps the stream tail: new appends get seqs above every seq ever acknowledged, and the lost seqs are a gap readers skip', async () => {
    const dataDir = tempDir();
    const args = [...ONE_SHARD, '--segment-bytes', '4096'];
    const node = await startNode({ dataDir, args });
    await fill(node.url, '/tail', 120);
    expect(await node.stop()).toBe(0);
    const segs = segFiles(dataDir);
    expect(segs.length).toBeGreaterThan(2);
    const newest = segs[segs.length - 1]!;
    const lostFirst = Number(/record-(\d{3})/.exec(fs.readFileSync(newest).toString('latin1'))![1]);
    expect(lostFirst).toBeGreaterThan(0);
    fs.rmSync(newest);

    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(1);
    const repair = svc(['repair', '--data-dir', dataDir]);
    expect(repair.status).toBe(0);

    const again = await startNode({ dataDir, args });
    // Before any new append, a reader inside the gap is moved past it to the tail, not told to read the same seq again.
    const before = await fetch(`${again.url}/tail?seq=${lostFirst + 1}&format=json`);
    expect(before.status).toBe(200);
    expect(before.headers.get('svc-next-seq')).toBe('120');
    expect(await before.json()).toEqual([]);
    // A long-poll inside the gap waits at the tail and is answered by the first record after it.
    const poll = fetch(`${again.url}/tail?seq=${lostFirst}&format=json&live=long-poll`, { signal: AbortSignal.timeout(25_000) });
    const appended: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${again.url}/tail`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `after-${i}` });
      expect(res.status).toBe(200);
      appended.push(Number(res.headers.get('svc-start-seq')));
    }
    // Above every seq acknowledged before the loss (0..119), none reused.
    expect(appended).toEqual(Array.from({ length: 20 }, (_, i) => 120 + i));
    const polled = await poll;
    expect(polled.status).toBe(200);
    expect(((await polled.json()) as Array<{ seq: number }>)[0]!.seq).toBe(120);
    // A read skips the lost seqs as it skips quarantined ones: the survivors, then the new records.
    const got = await records(again.url, '/tail');
    expect(got.map((r) => r.seq)).toEqual([...Array.from({ length: lostFirst }, (_, i) => i), ...appended]);
    expect(got.map((r) => r.body)).toEqual([...Array.from({ length: lostFirst }, (_, i) => body(i)), ...appended.map((_, i) => `after-${i}`)]);
    // A read starting inside the gap gets the first record after it.
    const inGap = await fetch(`${again.url}/tail?seq=${lostFirst}&format=json&count=1`);
    expect(((await inGap.json()) as Array<{ seq: number }>).map((r) => r.seq)).toEqual([120]);
    // And after a restart (the index rebuilt by the first start is checkpointed with the new tail).
    expect(await again.stop()).toBe(0);
    const third = await startNode({ dataDir, args });
    const res = await fetch(`${third.url}/tail`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'third' });
    expect(res.headers.get('svc-start-seq')).toBe('140');
    expect(await third.stop()).toBe(0);
    // The check named what the lost file held, from the index; the repair said what it kept.
    expect(check.err).toContain(`${newest}: missing, but the index refers to it; the index puts stream /tail seqs ${lostFirst}..119 in it`);
    expect(repair.out).toMatch(/kept the next seq of 1 stream/);
  });
});

describe('svc check on a damaged frame', () => {
  it('names the stream and the seq range the damaged frame held, and svc repair says which records it quarantined', async () => {
    const dataDir = tempDir();
    const node = await startNode({ dataDir, args: ONE_SHARD });
    await fill(node.url, '/acked', 30);
    expect(await node.stop()).toBe(0);
    const seg = segFiles(dataDir)[0]!;
    const b = fs.readFileSync(seg);
    const at = b.indexOf('record-007');
    b[at] = b[at]! ^ 0x01;
    fs.writeFileSync(seg, b);

    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(1);
    // The frame's header (its CRC failed, so it is only a witness) and the index agree.
    expect(check.err).toMatch(/damaged frame at bytes \d+\.\.\d+ \(CRC mismatch\); valid frames follow; its header says stream \/acked, seqs 7\.\.7; the index's chunks overlapping these bytes hold stream \/acked seqs 0\.\.29/);

    const repair = svc(['repair', '--data-dir', dataDir]);
    expect(repair.status).toBe(0);
    expect(repair.out).toMatch(/replaced by padding \(its header says stream \/acked, seqs 7\.\.7;/);
  });
});

describe('svc check after a clean stop of a node whose 8 shards wrote through the sync journal', () => {
  it('says nothing of journaled writes missing from their segments, which are all there', async () => {
    const dataDir = tempDir();
    const names: string[] = [];
    for (let i = 0; names.length < 8; i++) if (!names.some((n) => shardOf(n, 8) === shardOf(`j-${i}`, 8))) names.push(`j-${i}`);
    const node = await startNode({ dataDir, engine: 'node', args: ['--shards', '8', '--shard-workers', '1'] });
    for (const n of names) expect((await fetch(`${node.url}/${n}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (let b = 0; b < 10; b++) expect(await pipelinedBurst(node.url, names.map((n): [string, string] => [n, `b${b}`]))).toEqual(names.map(() => 200));
    expect(await node.stop()).toBe(0);
    // The journal still holds the bursts (it is emptied at 64 MiB), but their bytes are in the segments.
    expect(fs.statSync(path.join(dataDir, 'journal', 'worker-0.journal')).size).toBeGreaterThan(0);
    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(0);
    expect(check.out).not.toMatch(/journal/);
    expect(check.out).toMatch(/8 shards, \d+ segments, \d+ valid frames: ok/);
  });
});
