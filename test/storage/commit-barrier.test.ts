/**
 * The commit barrier (src/shards/worker/commit-barrier.ts): appends to streams on all 8 shards
 * of one worker, sent in bursts, are acknowledged after about one fdatasync per burst (the
 * worker's sync journal) instead of one per shard, as the node's svc_log_syncs_total counts;
 * and everything acknowledged survives a SIGKILL right after the acks followed by the loss of
 * the shard logs' unsynced tails (what a power cut does to the page cache), because the start
 * writes the journal back into the logs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shardOf } from '../../src/shards/placement';
import { startNode, tempDir } from '../helpers/node-process';

const SHARDS = 8;
const BURSTS = 40;

/** One stream name per shard (a stream lives in shard fnv1a(name) mod shards). */
function onePerShard(): string[] {
  const names = new Array<string | undefined>(SHARDS).fill(undefined);
  for (let i = 0; names.includes(undefined); i++) {
    const n = `barrier-${i}`;
    names[shardOf(n, SHARDS)] ??= n;
  }
  return names as string[];
}

async function metric(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (m === null) throw new Error(`${name} is not in /metrics`);
  return Number(m[1]);
}

/** Sizes of every shard's segment files now. */
function segmentSizes(dataDir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (let k = 0; k < SHARDS; k++) {
    const dir = path.join(dataDir, 'shards', String(k), 'log');
    for (const f of fs.readdirSync(dir)) out.set(path.join(dir, f), fs.statSync(path.join(dir, f)).size);
  }
  return out;
}

async function readBodies(url: string, name: string): Promise<string[]> {
  const res = await fetch(`${url}/${name}?seq=0&count=5000`);
  expect(res.status).toBe(200);
  const page = (await res.json()) as Array<{ seq: number; body: string }>;
  page.forEach((r, i) => expect(r.seq).toBe(i));
  return page.map((r) => r.body);
}

describe('a worker holding 8 shards under appends spread over all of them', () => {
  const dataDir = tempDir('svc-barrier-');
  const names = onePerShard();
  const acked = new Map<string, string[]>(names.map((n) => [n, []]));
  let syncs = 0;
  let groups = 0;
  let before: Map<string, number> = new Map();

  beforeAll(async () => {
    const node = await startNode({ dataDir, args: ['--shard-workers', '1', '--shards', String(SHARDS)] });
    for (const n of names) expect((await fetch(`${node.url}/${n}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const syncs0 = await metric(node.adminUrl!, 'svc_log_syncs_total');
    const groups0 = await metric(node.adminUrl!, 'svc_group_commit_frames_count');
    for (let b = 0; b < BURSTS; b++) {
      // The last bursts are the ones whose logs' tails the simulated power cut drops.
      if (b === BURSTS - 10) before = segmentSizes(dataDir);
      await Promise.all(
        names.map(async (n) => {
          const body = `burst-${b}-${n}`;
          const res = await fetch(`${node.url}/${n}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
          expect(res.status).toBe(200);
          acked.get(n)!.push(body);
        }),
      );
    }
    syncs = (await metric(node.adminUrl!, 'svc_log_syncs_total')) - syncs0;
    groups = (await metric(node.adminUrl!, 'svc_group_commit_frames_count')) - groups0;
    await node.kill();
  });

  it('writes to every shard of the worker', () => {
    for (let k = 0; k < SHARDS; k++) expect(fs.readdirSync(path.join(dataDir, 'shards', String(k), 'log')).length).toBeGreaterThan(0);
  });

  it('makes the groups of a burst durable with far fewer fdatasyncs than shards touched', () => {
    // Without the barrier every group is one fdatasync (syncs === groups, 8 per burst).
    expect(groups).toBeGreaterThanOrEqual(BURSTS * SHARDS * 0.9);
    expect(syncs).toBeGreaterThan(0);
    expect(syncs * 3).toBeLessThan(groups);
  });

  it('keeps every acknowledged append after a SIGKILL and the loss of the logs unsynced tails', async () => {
    const journal = path.join(dataDir, 'journal', 'worker-0.journal');
    expect(fs.statSync(journal).size).toBeGreaterThan(0);
    // The power cut: each segment file loses what was written to it in the last bursts (only
    // the journal's fdatasync made those durable).
    let cut = 0;
    for (const [file, size] of segmentSizes(dataDir)) {
      const keep = before.get(file) ?? 0;
      if (size > keep) {
        fs.truncateSync(file, keep);
        cut++;
      }
    }
    expect(cut).toBeGreaterThanOrEqual(SHARDS);
    const node = await startNode({ dataDir, args: ['--shard-workers', '1'] });
    expect(node.output()).toMatch(/sync journal replayed into the shard logs/);
    for (const n of names) expect(await readBodies(node.url, n)).toEqual(acked.get(n));
    expect(fs.existsSync(journal)).toBe(true); // the new thread's own, empty until its first barrier
    expect(await node.stop()).toBe(0);
  });

  it('ignores a torn journal record (a barrier that was never acknowledged) and serves the same data after a restart with 3 workers', async () => {
    const dir = path.join(dataDir, 'journal');
    const torn = Buffer.alloc(300, 0x5a);
    torn.writeUInt32BE(4096, 0);
    fs.writeFileSync(path.join(dir, 'worker-0.journal'), torn);
    const node = await startNode({ dataDir, args: ['--shard-workers', '3'] });
    for (const n of names) expect(await readBodies(node.url, n)).toEqual(acked.get(n));
    expect(await node.stop()).toBe(0);
  });
});
