/**
 * The index can always be rebuilt from the segments: a real node reaps the segment holding
 * the streams' create frames, its index is deleted, and after a restart every live stream and
 * record is back, and every deleted one stays deleted.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startNode, tempDir } from '../helpers/node-process';

jest.setTimeout(60_000);

const ARGS = ['--shards', '1', '--shard-workers', '1', '--segment-bytes', '4096', '--reaper-interval-ms', '100', '--retention-interval-ms', '100'];

async function put(url: string, name: string, headers: Record<string, string> = {}): Promise<void> {
  expect((await fetch(url + name, { method: 'PUT', headers: { 'content-type': 'text/plain', ...headers } })).status).toBe(201);
}

async function post(url: string, name: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url + name, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body });
  expect(res.status).toBe(200);
}

async function records(url: string, name: string): Promise<{ status: number; bodies: string[]; head: Record<string, string | null> }> {
  const res = await fetch(`${url}${name}?seq=0&count=1000`);
  if (res.status !== 200) return { status: res.status, bodies: [], head: {} };
  const bodies = ((await res.json()) as Array<{ body: string }>).map((r) => r.body);
  return { status: 200, bodies, head: { start: res.headers.get('svc-start-seq'), next: res.headers.get('svc-next-seq'), closed: res.headers.get('svc-closed') } };
}

describe('rebuilding a reaped shard\'s index', () => {
  it('brings back every live stream and record after reap, index deletion and restart', async () => {
    const dataDir = tempDir();
    const logDir = path.join(dataDir, 'shards', '0', 'log');
    let node = await startNode({ dataDir, args: ARGS });
    await put(node.url, '/keep');
    await put(node.url, '/sealed');
    await put(node.url, '/big');
    for (let i = 0; i < 60; i++) await post(node.url, '/big', 'b'.repeat(200) + i);
    await post(node.url, '/sealed', 'final', { 'svc-closed': 'true' });
    expect((await fetch(node.url + '/big', { method: 'DELETE' })).status).toBe(204);
    for (let i = 0; i < 30; i++) await post(node.url, '/keep', `keep-${i}-` + 'k'.repeat(150));
    // Wait for the reaper to delete the first segment (it holds every CREATE frame).
    for (let i = 0; i < 100 && fs.readdirSync(logDir).includes('0000000000.seg'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(fs.readdirSync(logDir)).not.toContain('0000000000.seg');
    const keep = await records(node.url, '/keep');
    const sealed = await records(node.url, '/sealed');
    expect(keep.bodies).toHaveLength(30);
    expect(sealed.head.closed).toBe('true');
    expect(await node.stop()).toBe(0);

    fs.rmSync(path.join(dataDir, 'shards', '0', 'index'), { recursive: true });
    node = await startNode({ dataDir, args: ARGS });
    expect(await records(node.url, '/keep')).toEqual(keep);
    expect(await records(node.url, '/sealed')).toEqual(sealed);
    expect((await records(node.url, '/big')).status).toBe(404);
    await node.stop();
  });

  it('carries the catalog frames of a segment written before a restart, found by a scan, before reaping it', async () => {
    const dataDir = tempDir();
    const logDir = path.join(dataDir, 'shards', '0', 'log');
    // Large segments: everything below stays in segment 0 until the restart.
    const args = [...ARGS.slice(0, ARGS.indexOf('--segment-bytes')), '--segment-bytes', String(1 << 20), ...ARGS.slice(ARGS.indexOf('--segment-bytes') + 2)];
    let node = await startNode({ dataDir, args });
    await put(node.url, '/keep');
    await put(node.url, '/big');
    for (let i = 0; i < 40; i++) await post(node.url, '/keep', `keep-${i}`);
    for (let i = 0; i < 20; i++) await post(node.url, '/big', 'b'.repeat(40_000) + i);
    expect(await node.stop()).toBe(0);
    // Segment 0 was written by the node before this start: whether it holds catalog frames (the
    // CREATE of both streams) is learnt by reading it, a bounded part per maintenance.
    node = await startNode({ dataDir, args });
    expect((await fetch(node.url + '/big', { method: 'DELETE' })).status).toBe(204);
    for (let i = 0; i < 30; i++) await post(node.url, '/keep', 'n'.repeat(40_000) + i);
    // /keep's records in segment 0 (the 40 small ones and the first large ones) are trimmed: its data there is all dead.
    const trim = await fetch(node.url + '/keep', { method: 'POST', headers: { 'svc-trim-seq': '55' } });
    expect(trim.status).toBe(200);
    for (let i = 0; i < 100 && fs.readdirSync(logDir).includes('0000000000.seg'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(fs.readdirSync(logDir)).not.toContain('0000000000.seg');
    const keep = await records(node.url, '/keep');
    expect(keep.head.start).toBe('55');
    expect(keep.bodies).toHaveLength(15);
    expect(await node.stop()).toBe(0);

    fs.rmSync(path.join(dataDir, 'shards', '0', 'index'), { recursive: true });
    node = await startNode({ dataDir, args });
    expect(await records(node.url, '/keep')).toEqual(keep);
    expect((await records(node.url, '/big')).status).toBe(404);
    await node.stop();
  });
});
