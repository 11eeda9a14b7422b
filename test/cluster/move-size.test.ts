/**
 * Move and failover time do not depend on the stream's size with `--objects-reads remote`
 * (docs/objects.md, "Reads from the object store"): 3 etcd members, 3 nodes on one `file:` object
 * store, a continuous writer on a small stream (1 MiB) and on a large one (MOVE_SIZE_LARGE_MIB,
 * default 512 MiB, filled quickly in 2 MiB requests). Each is transferred back and forth under
 * that load, then their owner is killed and wiped; the unavailability of each (the longest gap
 * between its writer's acknowledgements around the move) is measured. The large stream's is within
 * 1.5× of the small one's (plus 250 ms of scheduling noise on a loaded machine), transfers' p99 is
 * under 1 s, and every acknowledged record is read back after the moves.
 *
 * Before the dead-segment finder knew which segments hold catalog frames (catalog-marks.ts), a
 * node whose copy of the large stream died read its dead segments whole on the shard worker, 1–1.7 s
 * in one synchronous read, and the next open on that node waited for it: transfers' p99 was
 * 1.3–2.8 s, every outlier one such wait. Each gap over 500 ms is printed with what the writer
 * saw, and every open's steps, so the next outlier says where its time went.
 */
import { randomBytes } from 'node:crypto';
import { type ObjectsCluster, objectsClusterForFile, quantile, until } from './objects-cluster';
import { type ReadRecord, type Writer, follow, missing, readAll, svcWriter } from './writers';
import { runAlone } from '../helpers/run-alone';

jest.setTimeout(600_000);

const LARGE_MIB = Number(process.env['MOVE_SIZE_LARGE_MIB'] ?? 512);
const ROUNDS = Number(process.env['MOVE_SIZE_ROUNDS'] ?? 6);
/** Scheduling noise allowed on top of the ratio (ms): both gaps are a few tens of ms on an idle machine. */
const NOISE_MS = 250;

// A latency bound on a whole cluster: not beside another such suite (run-alone.ts). In CI beside
// the exactly-once transfers' cluster, the 1 MiB stream's p99 was 1,032 ms, its opens ≤ 486 ms.
runAlone();
const c: ObjectsCluster = objectsClusterForFile(['--node-lease-ttl', '3', '--objects-reads', 'remote']);
/** The writers, stopped after the test whatever it found (a running writer keeps jest from ending). */
const writers: Writer[] = [];
afterAll(async () => {
  await Promise.all(writers.map((w) => w.stop()));
});

/**
 * Append `mib` MiB to `stream` in requests of (up to) 4 records of 512 KiB, 8 requests at a time: each
 * group's entry is then 2 MiB or more, as compaction leaves a stream (entries of 1–16 MiB are not
 * rewritten), so the moves find the large stream as a long-lived one is, not racing compaction's
 * rewrite of the whole fill (which on one machine's disk and etcd slowed every open of the run).
 */
async function fill(stream: string, mib: number): Promise<void> {
  const perRequest = Math.min(4, mib * 2);
  const body = JSON.stringify({ records: Array.from({ length: perRequest }, () => ({ body: randomBytes(384 * 1024).toString('base64') })) }); // 512 KiB of text each
  let left = Math.ceil((mib * 2) / perRequest);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) {
        const r = await follow(`${c.any().url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body });
        if (r.status !== 200) throw new Error(`fill ${stream}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      }
    }),
  );
}

/** The longest gap between `w`'s acknowledgements from `t0` to its first one after `placed` resolves. */
async function gapAround(w: Writer, t0: number, placed: () => Promise<void>): Promise<number> {
  await placed();
  const n = w.acked.length;
  await until(`an append to ${w.stream} after the move`, async () => (w.acked.length > n ? true : null), 30_000, 10);
  const t1 = w.acked[w.acked.length - 1]!.at;
  const ats = [t0, ...w.acked.filter((a) => a.at >= t0 && a.at <= t1).map((a) => a.at)];
  let gap = 0;
  let at = t0;
  for (let k = 1; k < ats.length; k++) {
    if (ats[k]! - ats[k - 1]! > gap) [gap, at] = [ats[k]! - ats[k - 1]!, ats[k - 1]!];
  }
  if (gap > 500) {
    // What the writer saw meanwhile: its failed attempts, and the acknowledged append that ended the gap.
    const fails = w.failed.filter((f) => f.at >= at && f.sent <= at + gap);
    const failed = fails.length === 0 ? 'none' : `${fails.length}, sent from +${fails[0]!.sent - at} to +${fails[fails.length - 1]!.sent - at} ms, the last: ${fails[fails.length - 1]!.error.slice(0, 160)}`;
    const ended = w.acked.find((a) => a.at === at + gap);
    console.log(`move-size: ${w.stream} gap of ${gap} ms from ${new Date(at).toISOString()} (move asked at +${t0 - at} ms); failed attempts: ${failed}; the append that ended it was sent at +${ended === undefined ? '?' : ended.sent - at} ms`);
  }
  return gap;
}

async function placedOn(stream: string, pred: (owner: number) => boolean): Promise<void> {
  await until(`${stream} placed`, async () => {
    const d = await c.detail(stream);
    return d.state === 'placed' && pred(d.ownerNodeId) ? true : null;
  }, 60_000, 20);
}

async function transfer(stream: string, toNode: number): Promise<void> {
  const r = await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream, toNode }) });
  expect(r.status).toBe(200);
}

/** Every node's "opened a stream moved here" lines: how long each step of each open took. */
function openLines(): string[] {
  return [...c.nodes].flatMap(([id, n]) =>
    n
      .output()
      .split('\n')
      .filter((l) => l.includes('opened a stream moved here'))
      .map((l) => {
        const j = JSON.parse(l) as { stream: string; epoch: number; ms: number; phases: Record<string, number> };
        return `node ${id} ${j.stream} e${j.epoch} ${j.ms} ms ${JSON.stringify(j.phases)}`;
      }),
  );
}

test(`a 1 MiB and a ${LARGE_MIB} MiB stream: transfer and failover unavailability does not grow with the size`, async () => {
  const small = await svcWriter(c, '/ms/small');
  const large = await svcWriter(c, '/ms/large');
  writers.push(small, large);
  const t = Date.now();
  await Promise.all([fill('/ms/small', 1), fill('/ms/large', LARGE_MIB)]);
  console.log(`move-size: filled ${LARGE_MIB} MiB in ${Date.now() - t} ms`);
  const gaps = { small: [] as number[], large: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const [w, key] of [[small, 'small'], [large, 'large']] as const) {
      const d = await c.detail(w.stream);
      const to = d.ownerNodeId === 1 ? 2 : 1;
      const t0 = Date.now();
      await transfer(w.stream, to);
      gaps[key].push(await gapAround(w, t0, () => placedOn(w.stream, (o) => o === to)));
    }
  }
  const p99 = { small: quantile(gaps.small, 0.99), large: quantile(gaps.large, 0.99) };
  console.log(`move-size transfer gaps (ms): small ${gaps.small.join(' ')}; large ${gaps.large.join(' ')}`);
  console.log(`move-size opens:\n${openLines().join('\n')}`);
  console.log(`move-size transfers: small p50 ${quantile(gaps.small, 0.5)} ms p99 ${p99.small} ms; large (${LARGE_MIB} MiB) p50 ${quantile(gaps.large, 0.5)} ms p99 ${p99.large} ms`);
  expect(p99.large).toBeLessThan(1000);
  expect(p99.small).toBeLessThan(1000);
  expect(p99.large).toBeLessThanOrEqual(1.5 * p99.small + NOISE_MS);

  // Failover: both on one node, which is killed and wiped.
  const victim = (await c.detail(large.stream)).ownerNodeId;
  if ((await c.detail(small.stream)).ownerNodeId !== victim) {
    await transfer(small.stream, victim);
    await placedOn(small.stream, (o) => o === victim);
  }
  const t0 = Date.now();
  await c.killAndWipe(victim);
  const [fs, fl] = await Promise.all([gapAround(small, t0, () => placedOn(small.stream, (o) => o !== victim)), gapAround(large, t0, () => placedOn(large.stream, (o) => o !== victim))]);
  console.log(`move-size failover: small ${fs} ms, large ${fl} ms`);
  expect(fl).toBeLessThanOrEqual(1.5 * fs + NOISE_MS);
  await c.startNode(victim);
  await c.waitLive(3);

  await small.stop();
  await large.stop();
  expect(missing(small, await readAll(c, small.stream))).toEqual([]);
  // The large stream's writer records, each read at its seq (not the filler's 512 KiB records between them).
  const got: ReadRecord[] = [];
  for (const a of large.acked) {
    const r = await follow(`${c.any().url}${large.stream}?seq=${a.seq}&count=1&format=json`, { method: 'GET' });
    expect(r.status).toBe(200);
    got.push(...((await r.json()) as ReadRecord[]));
  }
  expect(missing(large, got)).toEqual([]);
});
