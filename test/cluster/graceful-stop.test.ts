/**
 * A graceful stop hands its streams off first (docs/cluster.md, "Graceful stop"): 3 etcd members,
 * 3 nodes on one `file:` object store, nine streams each written by a client that follows 307s and
 * sends the same record again after a 307, a 503 `moved` or `shutting_down` (nothing stored) or a
 * refused connection; every record's body is a unique id. The node owning the most streams gets
 * SIGTERM. No append is answered `shutting_down` or "owner down" (its streams moved before the
 * drain, while it still answered 307). Its streams' unavailability (the longest gap between a stream's acknowledgements from
 * the signal on) is printed, p50 and p99 (goal p99 < 1 s), and afterwards every acknowledged id is
 * in its stream at its seq, and none is there twice.
 */
import { objectsClusterForFile, quantile, sleep, until } from './objects-cluster';
import { readAll } from './writers';
import { runAlone } from '../helpers/run-alone';

jest.setTimeout(150_000);

// A latency bound on a whole cluster: not beside another such suite (run-alone.ts).
runAlone();

const c = objectsClusterForFile(['--node-lease-ttl', '3']);

interface Ack {
  id: string;
  seq: number;
  at: number;
}

/** Appends records with unique ids to one stream through any running node until stopped. */
class Writer {
  readonly acked: Ack[] = [];
  readonly unknown: string[] = [];
  /** Answers saying the stream cannot be served now: 503 shutting_down, or its owner is down (no live lease). */
  readonly unserved: string[] = [];
  #stopped = false;
  #done: Promise<void> = Promise.resolve();

  constructor(readonly stream: string) {}

  start(): this {
    this.#done = this.#loop();
    return this;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
  }

  async #loop(): Promise<void> {
    for (let i = 0; !this.#stopped; i++) {
      const id = `${this.stream}#${i}`;
      const nodes = [...c.nodes.values()];
      let at = nodes[i % nodes.length]!.url;
      for (let tries = 0; ; tries++) {
        let status = 0;
        let text: string;
        let location: string | null = null;
        let seq: number | null = null;
        let refused = false;
        try {
          const r = await fetch(`${at}${this.stream}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: id, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
          text = await r.text();
          status = r.status;
          location = r.headers.get('location');
          seq = r.headers.get('svc-start-seq') === null ? null : Number(r.headers.get('svc-start-seq'));
        } catch (err) {
          // Refused before anything was sent: nothing stored.
          refused = (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
          text = String((err as { cause?: unknown }).cause ?? err);
        }
        if (status === 503 && (text.includes('"error":"shutting_down"') || text.includes('which is down'))) this.unserved.push(`${id}: ${text.slice(0, 120)}`);
        if (status === 200) {
          this.acked.push({ id, seq: seq!, at: Date.now() });
          break;
        }
        // A stream whose owner is down is not served: nothing was stored.
        const notStored = status === 307 || (status === 503 && (text.includes('"error":"moved"') || text.includes('"error":"shutting_down"') || text.includes('which is down'))) || refused;
        if (notStored && tries < 200) {
          if (status === 307) at = new URL(location!).origin;
          else {
            await sleep(20);
            const now = [...c.nodes.values()];
            if (refused || status === 503) at = now[(i + tries) % now.length]!.url;
          }
          continue;
        }
        this.unknown.push(`${id}: ${status} ${text.slice(0, 120)}`);
        await sleep(20);
        break;
      }
    }
  }
}

test('a node stopped with SIGTERM under load hands its streams off: they are unavailable briefly, and no record is lost or stored twice', async () => {
  const streams = Array.from({ length: 9 }, (_, i) => `/gs/s${i}`);
  for (const s of streams) {
    const r = await fetch(`${c.any().url}${s}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'follow' });
    expect([200, 201]).toContain(r.status);
  }
  const owners = new Map<string, number>();
  for (const s of streams) owners.set(s, (await until(`${s} placed`, async () => ((await c.detail(s)).state === 'placed' ? c.detail(s) : null))).ownerNodeId);
  const count = new Map<number, number>();
  for (const o of owners.values()) count.set(o, (count.get(o) ?? 0) + 1);
  const busiest = [...count.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const theirs = streams.filter((s) => owners.get(s) === busiest);

  const writers = streams.map((s) => new Writer(s).start());
  await until('every writer acknowledged', async () => (writers.every((w) => w.acked.length > 10) ? true : null), 30_000);
  await sleep(1_000);
  const victim = c.nodes.get(busiest)!;
  const t0 = Date.now();
  const stopped = victim.stop();
  // New requests go to the others from now on (the stopping node still answers those it has).
  c.nodes.delete(busiest);
  const code = await stopped;
  const tStopped = Date.now();
  await sleep(3_000);
  for (const w of writers) await w.stop();

  const gaps: number[] = [];
  for (const w of writers.filter((x) => theirs.includes(x.stream))) {
    const after = w.acked.filter((a) => a.at > t0);
    const ats = [t0, ...after.map((a) => a.at)];
    let gap = after.length === 0 ? Date.now() - t0 : 0;
    for (let k = 1; k < ats.length; k++) gap = Math.max(gap, ats[k]! - ats[k - 1]!);
    gaps.push(gap);
  }
  const problems: string[] = [];
  for (const w of writers) {
    const records = await readAll(c, w.stream);
    const seen = new Map<string, number>();
    for (const r of records) seen.set(r.body!, (seen.get(r.body!) ?? 0) + 1);
    for (const [id, n] of seen) if (n > 1) problems.push(`${id} stored ${n} times`);
    const bySeq = new Map(records.map((r) => [r.seq, r.body]));
    for (const a of w.acked) if (bySeq.get(a.seq) !== a.id) problems.push(`${a.id} acknowledged at seq ${a.seq}, read ${JSON.stringify(bySeq.get(a.seq) ?? null)}`);
  }
  console.log(`graceful stop of node ${busiest} (${theirs.length} of ${streams.length} streams; exit ${code}, ${tStopped - t0} ms): its streams unavailable p50 ${quantile(gaps, 0.5)} ms, p99 ${quantile(gaps, 0.99)} ms, max ${Math.max(...gaps)} ms; acked ${writers.reduce((n, w) => n + w.acked.length, 0)}, answered shutting_down or owner down ${writers.reduce((n, w) => n + w.unserved.length, 0)}, unknown outcomes ${writers.reduce((n, w) => n + w.unknown.length, 0)} ${writers.flatMap((w) => w.unknown).slice(0, 3).join('; ')}\nproblems: ${problems.length}\n${problems.slice(0, 10).join('\n')}`);
  expect(code).toBe(0);
  expect(problems).toEqual([]);
  // Handed off before the drain: no append to its streams is told the node is shutting down or down.
  expect(writers.flatMap((w) => w.unserved)).toEqual([]);
  // Timings are reported above, not asserted tightly (the machine may be loaded): the streams must
  // move before the node's lease would have expired and the lease holder failed them over.
  expect(Math.max(...gaps)).toBeLessThan(3_000);
});
