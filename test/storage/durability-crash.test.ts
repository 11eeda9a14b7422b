/**
 * Durability classes under SIGKILL (docs/storage.md, "Durability classes"): appenders write to
 * `sync` and `async` streams side by side, the node is killed mid-load, and after a restart
 * every acknowledged record of both classes is there with its seq and bytes.
 *
 * What this proves for `async`: a process crash loses nothing acknowledged, because an `async`
 * append is acknowledged only once its bytes are written to the segment file, and the kernel's
 * page cache outlives the process. It does not model a power loss (the page cache lost with
 * the machine); durability-class.test.ts does that with the log's own sync points.
 */
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

interface Acked {
  stream: string;
  seq: number;
  body: string;
}

const SYNC_STREAMS = ['/dur/sync0', '/dur/sync1'];
const ASYNC_STREAMS = ['/dur/async0', '/dur/async1', '/dur/async2'];
const STREAMS = [...SYNC_STREAMS, ...ASYNC_STREAMS];

async function appendLoop(url: string, client: number, stop: { now: boolean }, acked: Acked[]): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const stream = STREAMS[(client + i) % STREAMS.length]!;
    const body = `c${client}-i${i}-` + 'y'.repeat((i * 13) % 300);
    let res: Response;
    try {
      res = await fetch(url + stream, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    } catch {
      return; // killed under us: not acknowledged
    }
    if (res.status !== 200) throw new Error(`append failed with ${res.status}: ${await res.text()}`);
    acked.push({ stream, seq: Number(res.headers.get('svc-start-seq')), body });
  }
}

async function readAll(url: string, stream: string): Promise<Array<{ seq: number; body: string }>> {
  const out: Array<{ seq: number; body: string }> = [];
  let seq = 0;
  for (;;) {
    const res = await fetch(`${url}${stream}?seq=${seq}&count=5000`);
    expect(res.status).toBe(200);
    out.push(...((await res.json()) as Array<{ seq: number; body: string }>));
    seq = Number(res.headers.get('svc-next-seq'));
    if (res.headers.get('svc-up-to-date') === 'true') return out;
  }
}

async function config(url: string, stream: string): Promise<{ durability: string; durabilityDefault: boolean }> {
  const res = await fetch(`${url}/_streams${stream}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { durability: string; durabilityDefault: boolean };
}

describe('sync and async streams of a node killed with SIGKILL under load', () => {
  const dataDir = tempDir('svc-dur-crash-');
  const acked: Acked[] = [];
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ dataDir, args: ['--shard-workers', '1', '--shards', '4'] });
    for (const s of SYNC_STREAMS) expect((await fetch(node.url + s, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    // One async stream is created async; the others become async by a config change.
    expect((await fetch(node.url + ASYNC_STREAMS[0]!, { method: 'PUT', headers: { 'content-type': 'text/plain', 'svc-durability': 'async' } })).status).toBe(201);
    for (const s of ASYNC_STREAMS.slice(1)) {
      expect((await fetch(node.url + s, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
      const res = await fetch(`${node.url}/_streams${s}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ durability: 'async' }) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { durability: string }).durability).toBe('async');
    }
    for (const s of ASYNC_STREAMS) expect((await fetch(node.url + s, { method: 'HEAD' })).headers.get('svc-durability')).toBe('async');
    expect(await config(node.url, SYNC_STREAMS[0]!)).toMatchObject({ durability: 'sync', durabilityDefault: true });
    const stop = { now: false };
    const loops = Array.from({ length: 8 }, (_, c) => appendLoop(node.url, c, stop, acked));
    // Kill once both classes have a good number of acknowledged appends (a condition, not a fixed time).
    const deadline = Date.now() + 60_000;
    const count = (set: string[]): number => acked.filter((a) => set.includes(a.stream)).length;
    while ((count(SYNC_STREAMS) < 150 || count(ASYNC_STREAMS) < 300) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await node.kill();
    stop.now = true;
    await Promise.all(loops);
  }, 90_000);

  it('had acknowledged appends of both classes before the kill', () => {
    expect(acked.filter((a) => SYNC_STREAMS.includes(a.stream)).length).toBeGreaterThanOrEqual(150);
    expect(acked.filter((a) => ASYNC_STREAMS.includes(a.stream)).length).toBeGreaterThanOrEqual(300);
  });

  it('keeps every acknowledged record of sync and of async streams, and the streams keep their class', async () => {
    node = await startNode({ dataDir, args: ['--shard-workers', '1', '--shards', '4'] });
    for (const stream of STREAMS) {
      const records = await readAll(node.url, stream);
      records.forEach((r, i) => expect(r.seq).toBe(i));
      const bySeq = new Map(records.map((r) => [r.seq, r.body]));
      for (const a of acked.filter((x) => x.stream === stream)) expect(bySeq.get(a.seq)).toBe(a.body);
    }
    for (const s of ASYNC_STREAMS) expect(await config(node.url, s)).toMatchObject({ durability: 'async', durabilityDefault: false });
    // null: back to the node's default.
    const res = await fetch(`${node.url}/_streams${ASYNC_STREAMS[1]!}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"durability": null}' });
    expect(((await res.json()) as { durability: string; durabilityDefault: boolean })).toMatchObject({ durability: 'sync', durabilityDefault: true });
    expect((await fetch(`${node.url}/_streams${ASYNC_STREAMS[1]!}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"durability": "fast"}' })).status).toBe(400);
    expect((await fetch(node.url + '/dur/bad', { method: 'PUT', headers: { 'content-type': 'text/plain', 'svc-durability': 'never' } })).status).toBe(400);
    expect(await node.stop()).toBe(0);
  }, 60_000);

  it('gives streams without a class of their own the node default (--durability async); the DS listener takes Svc-Durability', async () => {
    node = await startNode({ dataDir, args: ['--shard-workers', '1', '--shards', '4', '--durability', 'async', '--ds-listen', '127.0.0.1:0'] });
    expect(await config(node.url, SYNC_STREAMS[0]!)).toMatchObject({ durability: 'async', durabilityDefault: true });
    expect(await config(node.url, ASYNC_STREAMS[0]!)).toMatchObject({ durability: 'async', durabilityDefault: false });
    const ds = node.dsUrl!;
    expect((await fetch(`${ds}/v1/stream/dur/ds-sync`, { method: 'PUT', headers: { 'content-type': 'text/plain', 'svc-durability': 'sync' } })).status).toBe(201);
    expect((await fetch(`${ds}/v1/stream/dur/ds-default`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await fetch(`${ds}/v1/stream/dur/ds-bad`, { method: 'PUT', headers: { 'content-type': 'text/plain', 'svc-durability': 'maybe' } })).status).toBe(400);
    expect(await config(node.url, '/dur/ds-sync')).toMatchObject({ durability: 'sync', durabilityDefault: false });
    expect(await config(node.url, '/dur/ds-default')).toMatchObject({ durability: 'async', durabilityDefault: true });
    expect((await fetch(`${ds}/v1/stream/dur/ds-sync`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(204);
    expect(await node.stop()).toBe(0);
  }, 60_000);
});
