/**
 * The failover rounds of the issue's failover test, shared by the `file:` run (failover.test.ts)
 * and the `s3://` run (failover-s3.test.ts): 16 clients appending (Svc HTTP with keys and
 * headers, Durable Streams, Kafka with acks=all through kafkajs); each round SIGKILLs the node
 * owning the most of the clients' streams and wipes its data directory; within 10 s every one of
 * its streams is served by another node, and every record acknowledged so far is readable there
 * with its seq, bytes, key and headers. The killed node comes back empty under its id before the
 * next round.
 */
import { type ObjectsCluster, quantile, until } from './objects-cluster';
import { type Writer, dsWriter, kafkaWriter, lostRecords, readChecked, svcWriter } from './writers';

/** The bound: served by another node within 10 s of the kill. */
export const SERVED_WITHIN_MS = 10_000;

/** 7 Svc, 5 Durable Streams and 4 Kafka writers, on streams named under `prefix`. */
export async function startWriters(c: ObjectsCluster, prefix: string): Promise<Writer[]> {
  const writers: Writer[] = [];
  for (let i = 0; i < 7; i++) writers.push(await svcWriter(c, `/${prefix}/svc${i}`));
  for (let i = 0; i < 5; i++) writers.push(await dsWriter(c, `/${prefix}/ds${i}`));
  for (let i = 0; i < 4; i++) writers.push(await kafkaWriter(c, `${prefix}kafka${i}`));
  return writers;
}

async function owners(c: ObjectsCluster, writers: readonly Writer[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const w of writers) out.set(w.stream, (await c.detail(w.stream)).ownerNodeId);
  return out;
}

/**
 * Where a round's time went, in ms after the kill: when the survivors logged moving the dead
 * node's rows and opening each moved stream, and when each moved writer had its first
 * acknowledgement from the new owner (a writer's own retry pauses show as a late one).
 */
function roundStory(c: ObjectsCluster, t0: number, moved: readonly Writer[], servedAt: (w: Writer) => number | null): string {
  const events: string[] = [];
  for (const [id, n] of c.nodes) {
    for (const line of n.output().split('\n')) {
      if (!line.includes('moved the streams of nodes without a live lease') && !line.includes('opened a stream moved here')) continue;
      let rec: { time?: string; msg?: string; stream?: string; ms?: number; phases?: Record<string, number> };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue;
      }
      const at = Date.parse(rec.time ?? '') - t0;
      if (!(at >= 0)) continue;
      events.push(rec.stream !== undefined ? `node ${id} opened ${rec.stream} at ${at} (${rec.ms} ms: ${JSON.stringify(rec.phases ?? {})})` : `node ${id} moved rows at ${at}`);
    }
  }
  const acks = moved.map((w) => `${w.kind} ${w.stream} served at ${(servedAt(w) ?? NaN) - t0}`);
  return [...events, ...acks].join('; ');
}

/** Runs `rounds` rounds (asserting each), then stops the writers; returns how long each round took to be served elsewhere (ms). */
export async function failoverRounds(c: ObjectsCluster, writers: readonly Writer[], rounds: number): Promise<number[]> {
  await until('every client acknowledged', async () => (writers.every((w) => w.acked.length >= 3) ? true : null), 60_000);
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const own = await owners(c, writers);
    const count = new Map<number, number>();
    for (const id of own.values()) count.set(id, (count.get(id) ?? 0) + 1);
    const victim = [...count.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    const moved = writers.filter((w) => own.get(w.stream) === victim);
    const ackedBefore = new Map(writers.map((w) => [w, w.acked.length]));
    const t0 = Date.now();
    const gone = await c.killAndWipe(victim);
    // Served elsewhere: each moved stream placed on a live node, and an append its client sent
    // after the victim was gone acknowledged (an answer already on its way from the victim does
    // not count). The round's time is taken from those acknowledgements, not from when this loop
    // saw them: on a loaded machine its admin reads lag the clients by seconds.
    const servedAt = (w: Writer): number | null => w.acked.find((a, i) => i >= ackedBefore.get(w)! && a.sent >= gone)?.at ?? null;
    await until(`node ${victim}'s streams served elsewhere`, async () => {
      if (moved.some((w) => servedAt(w) === null)) return null;
      for (const w of moved) {
        const d = await c.detail(w.stream);
        if (d.state !== 'placed' || d.ownerNodeId === victim) return null;
      }
      return true;
    }, 30_000, 50).catch(async (err: unknown) => {
      const state = await Promise.all(moved.map(async (w) => ({ stream: w.stream, kind: w.kind, acked: w.acked.length, before: ackedBefore.get(w), failures: w.failures, lastError: w.lastError, detail: await c.detail(w.stream).catch((e: unknown) => String(e)) })));
      console.log(`round ${round}, victim ${victim}: ${JSON.stringify(state, null, 1)}`);
      throw err;
    });
    const took = Math.max(...moved.map((w) => servedAt(w)!)) - t0;
    times.push(took);
    const story = roundStory(c, t0, moved, servedAt);
    console.log(`round ${round}, victim ${victim}: served elsewhere after ${took} ms; ${story}`);
    if (took >= SERVED_WITHIN_MS) throw new Error(`round ${round}: served elsewhere after ${took} ms, not within ${SERVED_WITHIN_MS} ms; ${story}`);
    // The moved streams' acknowledged records, read from their new owners now; the others' are
    // read once at the end (reading every stream each round made the rounds grow with the data).
    const lost: string[] = [];
    for (const w of moved) lost.push(...(await lostRecords(c, w)));
    expect(lost).toEqual([]);
    // Back, empty, under its id: the next round may pick it.
    await c.startNode(victim);
    await c.waitLive(3);
  }
  // Last, with every writer stopped: each record ever acknowledged, also those acknowledged while
  // a round's check was reading, is there.
  for (const w of writers) await w.stop();
  const lost: string[] = [];
  for (const w of writers) lost.push(...(await readChecked(c, w)).lost);
  expect(lost).toEqual([]);
  console.log(`failover rounds: ${times.length}, served elsewhere after p50 ${quantile(times, 0.5)} ms, max ${Math.max(...times)} ms; acked ${writers.reduce((n, w) => n + w.acked.length, 0)} records (${writers.map((w) => w.kind).join(',')})`);
  return times;
}
