/**
 * The commit barrier (src/shards/worker/commit-barrier.ts): appends to streams on all 8 shards
 * of one worker, sent in bursts, are acknowledged after far fewer fdatasyncs than groups (the
 * worker's sync journal takes one for several shards), as the node's svc_log_syncs_total
 * counts; and everything acknowledged survives a SIGKILL right after the acks followed by the
 * loss of what only the journal made durable in the shard logs (what a power cut does to the
 * page cache), because the start writes the journal back into the logs.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shardOf } from '../../src/shards/placement';
import { MAIN, ROOT, startNode, tempDir } from '../helpers/node-process';
import { pipelinedBurst } from '../helpers/pipelined-burst';

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

/**
 * The byte ranges of each segment file the journal holds, from its records
 * (u32 length | u32 crc | u16 shard | u32 segment | u32 position | bytes; sync-journal.ts).
 */
function journalRanges(dataDir: string, journal: Buffer): Map<string, Array<[number, number]>> {
  const out = new Map<string, Array<[number, number]>>();
  for (let at = 0; at + 18 <= journal.length; ) {
    const len = journal.readUInt32BE(at);
    if (len < 18 || at + len > journal.length) break;
    const file = path.join(dataDir, 'shards', String(journal.readUInt16BE(at + 8)), 'log', String(journal.readUInt32BE(at + 10)).padStart(10, '0') + '.seg');
    const pos = journal.readUInt32BE(at + 14);
    if (!out.has(file)) out.set(file, []);
    out.get(file)!.push([pos, pos + len - 18]);
    at += len;
  }
  return out;
}

/** Where the part of a file only the journal covers begins: the start of the covered ranges that reach its end without a gap. */
function journalOnlyFrom(size: number, ranges: Array<[number, number]>): number {
  let from = size;
  for (const [a, b] of [...ranges].sort((x, y) => y[1] - x[1])) {
    if (b < from) break;
    from = Math.min(from, a);
  }
  return from;
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

  beforeAll(async () => {
    // The node engine answers pipelined requests (the uWS one refuses them: src/gateway/http/README.md).
    const node = await startNode({ dataDir, engine: 'node', args: ['--shard-workers', '1', '--shards', String(SHARDS)] });
    for (const n of names) expect((await fetch(`${node.url}/${n}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const syncs0 = await metric(node.adminUrl!, 'svc_log_syncs_total');
    const groups0 = await metric(node.adminUrl!, 'svc_group_commit_frames_count');
    for (let b = 0; b < BURSTS; b++) {
      const burst = names.map((n): [string, string] => [n, `burst-${b}-${n}`]);
      expect(await pipelinedBurst(node.url, burst)).toEqual(names.map(() => 200));
      for (const [n, body] of burst) acked.get(n)!.push(body);
    }
    syncs = (await metric(node.adminUrl!, 'svc_log_syncs_total')) - syncs0;
    groups = (await metric(node.adminUrl!, 'svc_group_commit_frames_count')) - groups0;
    await node.kill();
  });

  it('writes to every shard of the worker', () => {
    for (let k = 0; k < SHARDS; k++) expect(fs.readdirSync(path.join(dataDir, 'shards', String(k), 'log')).length).toBeGreaterThan(0);
  });

  it('makes the 8 groups of each burst durable with one fdatasync', () => {
    // Without the barrier every group is one fdatasync (syncs === groups, 8 per burst).
    expect(groups).toBe(BURSTS * SHARDS);
    expect(syncs).toBe(BURSTS);
  });

  it('keeps every acknowledged append after a SIGKILL and the loss of the logs unsynced tails', async () => {
    const journal = path.join(dataDir, 'journal', 'worker-0.journal');
    expect(fs.statSync(journal).size).toBeGreaterThan(0);
    // The power cut: each segment file loses its tail as far as the journal holds it without a
    // gap (what only the journal's fdatasync made durable; a shard's own fdatasync covers all of
    // its file before it, so the rest is a prefix that survives).
    const ranges = journalRanges(dataDir, fs.readFileSync(journal));
    let cutBytes = 0;
    for (const [file, size] of segmentSizes(dataDir)) {
      const keep = journalOnlyFrom(size, ranges.get(file) ?? []);
      if (keep < size) {
        fs.truncateSync(file, keep);
        cutBytes += size - keep;
      }
    }
    expect(cutBytes).toBeGreaterThan(0);
    // svc check reads the logs as they are and says what the journal still holds, writing nothing back.
    const journalSize = fs.statSync(journal).size;
    const check = spawnSync(process.execPath, [MAIN, 'check', '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
    expect(check.stdout).toMatch(/\d+ write\(s\) acknowledged through the sync journal are not in their segments yet/);
    expect(fs.statSync(journal).size).toBe(journalSize);
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
