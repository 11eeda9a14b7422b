/**
 * The offline check of the object store (src/objects/ledger-check.ts) against a real etcd (one
 * Debian etcd-server member) and a real `file:` store: streams recorded with the ledger's own
 * commit; one object with a flipped byte, one deleted, one range cut short by a trim that leaves
 * nothing damaged. Each damage is named by stream, seqs, object and bytes; the rest is clean.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Fence, Ledger, LedgerKeys, type ObjectStore, checkObjectLedger, groupObjectKey, openObjectStore } from '../../src/objects';
import { FrameType, encodeFrame } from '../../src/shards/worker/frame';
import { EtcdLink } from '../../src/actors';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { MAIN, ROOT } from '../helpers/node-process';
import { recordName } from '../../src/objects/part-records';

let cluster: EtcdCluster;
const etcd = { link: undefined as unknown as EtcdLink };
const me: Fence = { nodeId: 1, epoch: 1 };
let dir: string;
let store: ObjectStore;
let ledger: Ledger;
let prefix: string;
const seqs = new Map<string, number>();
let counter = 0;

beforeAll(async () => {
  cluster = await EtcdCluster.start(1);
  etcd.link = new EtcdLink(cluster.endpoints);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ledger-check-'));
  store = openObjectStore(`file:${dir}`);
  prefix = `check/${randomBytes(6).toString('hex')}`;
  ledger = new Ledger(etcd.link, prefix);
}, 60_000);
afterAll(async () => {
  etcd.link?.close();
  await cluster?.stop();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One group object with 3 frames of each stream, recorded; returns its key. */
async function group(streams: string[]): Promise<string> {
  const key = groupObjectKey(1, 1, 0, counter);
  const parts: Buffer[] = [];
  const commits = [];
  let off = 0;
  for (const s of streams) {
    const frames = Array.from({ length: 3 }, () => encodeFrame(FrameType.Data, 7, randomBytes(300)));
    const len = frames.reduce((n, f) => n + f.length, 0);
    const from = seqs.get(s) ?? 0;
    const meta = seqs.has(s) ? {} : { meta: { meta: { name: s }, startSeq: 0, sealed: false } };
    commits.push({ stream: s, fence: me, counter, off, len, from, to: from + 3, ...meta });
    seqs.set(s, from + 3);
    parts.push(...frames);
    off += len;
  }
  counter++;
  await store.put(key, parts);
  expect((await ledger.commit(key, off, commits)).fenced).toEqual([]);
  return key;
}

it('names every damaged range by stream, seqs and object, and only those', async () => {
  const [a, b, c] = ['/chk/a', '/chk/b', '/chk/c'];
  for (const s of [a, b, c]) expect((await ledger.takeFence(s, me, { create: true })).ok).toBe(true);
  const g0 = await group([a, b, c]);
  const g1 = await group([a, b]);
  const g2 = await group([a]);
  await group([a, b, c]);
  // A flipped byte in g1 (stream b's part: after a's 3 frames), g2 deleted, stream c clean.
  const file1 = path.join(dir, g1);
  const bytes = fs.readFileSync(file1);
  const bPart = (await ledger.entries(b)).find((e) => e.o === g1)!;
  bytes[bPart.off + 20]! ^= 0x40;
  fs.writeFileSync(file1, bytes);
  fs.rmSync(path.join(dir, g2));
  // A trim of stream c past its first entry: g0's part of c is no longer named.
  expect(await ledger.trim(c, me, 3)).toBe(true);

  const r = await checkObjectLedger(etcd.link, new LedgerKeys(prefix), store, { concurrency: 2 });
  expect(r.streams).toBe(3);
  expect(r.unreadable).toEqual([]);
  expect(r.damaged.map(({ reason: _r, ...d }) => d)).toEqual([
    { stream: a, from_seq: 6, to_seq: 8, object: g2, offset: 0, length: expect.any(Number) as number, kind: 'missing' },
    { stream: b, from_seq: 3, to_seq: 5, object: g1, offset: bPart.off, length: bPart.len, kind: 'frames' },
  ]);
  expect(r.damaged[1]!.reason).toMatch(/CRC/);
  expect(r.skipped).toBe(0); // the trim deleted the entry below the start
  expect(r.entries).toBe(4 + 3 + 1);
  void g0;

  // One stream asked for: only it is read.
  const onlyC = await checkObjectLedger(etcd.link, new LedgerKeys(prefix), store, { streams: [c] });
  expect(onlyC).toMatchObject({ streams: 1, entries: 1, damaged: [] });

  // The same check from the command line (the built binary): the damage on stderr, exit 1.
  const svc = (args: string[]) => spawnSync(process.execPath, [MAIN, 'check', '--objects', `file:${dir}`, '--metadata', cluster.url(prefix), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const all = svc([]);
  expect(all.status).toBe(1);
  expect(all.stderr).toContain(`stream ${a}: records 6..8 in object ${g2} bytes 0..`);
  expect(all.stderr).toContain(`stream ${b}: records 3..5 in object ${g1} bytes ${bPart.off}..${bPart.off + bPart.len}: frames: CRC mismatch`);
  expect(all.stdout).toMatch(/^3 streams, 8 ranges, \d+ bytes read: DAMAGED — 2 range\(s\)/);
  const clean = svc(['--stream', c]);
  expect(clean.stdout).toMatch(/^1 streams, 1 ranges, \d+ bytes read: ok/);
  expect(clean.status).toBe(0);
  expect(svc(['--data-dir', dir]).status).toBe(2);

  // A producer snapshot object the ledger names: checked whole; damaged, it is named with its seq.
  const snap = Buffer.from(JSON.stringify({ v: 1, seq: 9, producers: [] }));
  await store.put('p/1/1/0/000000000000', snap);
  expect(await ledger.recordProducerSnapshot(c, me, { seq: 9, o: 'p/1/1/0/000000000000', bytes: snap.length })).toBe(true);
  expect((await checkObjectLedger(etcd.link, new LedgerKeys(prefix), store, { streams: [c] })).damaged).toEqual([]);
  fs.writeFileSync(path.join(dir, 'p/1/1/0/000000000000'), Buffer.from(JSON.stringify({ v: 1, seq: 8, producers: [] })));
  const bad = await checkObjectLedger(etcd.link, new LedgerKeys(prefix), store, { streams: [c] });
  expect(bad.damaged).toEqual([{ stream: c, from_seq: 9, to_seq: 9, object: 'p/1/1/0/000000000000', offset: 0, length: snap.length, kind: 'producers', reason: 'the producer snapshot is not a snapshot as of seq 9' }]);
  fs.rmSync(path.join(dir, 'p/1/1/0/000000000000'));
  expect((await checkObjectLedger(etcd.link, new LedgerKeys(prefix), store, { streams: [c] })).damaged.map((x) => x.reason)).toEqual(['the producer snapshot is missing from the object store']);
}, 120_000);

it('checks the records format\'s parts not indexed yet too: those pending in part records and those stranded', async () => {
  const p = `check/${randomBytes(6).toString('hex')}`;
  const l = new Ledger(etcd.link, p);
  const writer = 'g/7/1/0/';
  const s = '/chk/records';
  const token = await l.commitToken(writer);
  const objects: string[] = [];
  for (let n = 0; n < 3; n++) {
    const key = groupObjectKey(7, 1, 0, n);
    const f = encodeFrame(FrameType.Data, 7, randomBytes(200));
    await store.put(key, [f]);
    const first = n === 0 ? { create: true, meta: { meta: { name: s }, startSeq: 0, sealed: false } } : {};
    const r = await l.commitObjects(new Map([[key, f.length]]), [{ stream: s, fence: me, ...first, entries: [{ o: key, counter: n, off: 0, len: f.length, from: n, to: n + 1 }] }], undefined, { token, records: { writer, firstObject: n } });
    expect(r.fenced).toEqual([]);
    objects.push(key);
  }
  // A part stranded (u/) after them, in an object of its own.
  const lone = groupObjectKey(7, 1, 0, 3);
  const f = encodeFrame(FrameType.Data, 7, randomBytes(200));
  await store.put(lone, [f]);
  await etcd.link.txnOnce([], [{ put: l.keys.strandedPart(s, 1, 3), value: Buffer.from(JSON.stringify({ o: lone, off: 0, len: f.length, from: 3, to: 4 })) }], []);
  const clean = await checkObjectLedger(etcd.link, new LedgerKeys(p), store, { streams: [s] });
  expect(clean).toMatchObject({ streams: 1, entries: 4, damaged: [], unreadable: [] });
  // A flipped byte in the second pending part's object.
  const file = path.join(dir, objects[1]!);
  const bytes = fs.readFileSync(file);
  bytes[30]! ^= 0x40;
  fs.writeFileSync(file, bytes);
  const r = await checkObjectLedger(etcd.link, new LedgerKeys(p), store, { streams: [s] });
  expect(r.damaged.map(({ reason: _r, ...d }) => d)).toEqual([{ stream: s, from_seq: 1, to_seq: 1, object: objects[1], offset: 0, length: f.length, kind: 'frames' }]);
  // The stranded part gone: the seqs after the pending parts are a hole no more (nothing follows),
  // but a pending part gone from the records leaves one.
  await etcd.link.txnOnce([], [{ delete: l.keys.partRecord(writer, recordName(1, 0)) }], []);
  const holed = await checkObjectLedger(etcd.link, new LedgerKeys(p), store, { streams: [s] });
  expect(holed.damaged.map((d) => [d.kind, d.from_seq, d.to_seq])).toEqual([['hole', 1, 1]]);
});
