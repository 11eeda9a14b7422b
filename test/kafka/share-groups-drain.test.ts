/**
 * One share group drained by HTTP leasers and Kafka share consumers together (docs/kafka.md,
 * "Share groups"; docs/protocol.md, "Share groups"): 100,000 records of one partition, 8 HTTP
 * workers (`/_share/{stream}` leases) and 4 Kafka share members (ShareGroupHeartbeat, ShareFetch
 * with acknowledgements, through the test's share client: no client installed here has a share
 * consumer) on the same group. One HTTP worker dies mid-lease (its 50 records come back after
 * their lock, delivered a second time), and the node is SIGKILLed halfway and started again:
 * no record is accepted twice — an answered acknowledgement lost in the kill would show as one —,
 * every record is accepted once or was in an acknowledgement whose answer the kill cut off, and
 * the group's stored totals count exactly 100,000 acknowledgements.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { ACCEPT, ShareWire, acksOf, gotOf } from './share-wire-client';

jest.setTimeout(240_000);

const N = 100_000;
const TOPIC = 'drain';
const GROUP = 'drain-g';
const JSON_TYPE = { 'content-type': 'application/json' };
const ARGS = ['--shards', '2', '--shard-workers', '1'];

interface Lease {
  lease: string;
  records: Array<{ seq: number; deliveryCount: number }>;
}

test('8 HTTP workers and 4 Kafka share members drain 100,000 records of one partition, each accepted exactly once, through a dead worker and a SIGKILLed node', async () => {
  let node: NodeProcess = await startNode({ args: ARGS });
  const w = await ShareWire.connect(node.kafka);
  expect(await w.createTopic(TOPIC, 1)).toBe(0);
  w.close();
  for (let i = 0; i < N; i += 5000) {
    const records = Array.from({ length: 5000 }, (_, j) => ({ body: `r${i + j}` }));
    const r = await fetch(`${node.url}/${TOPIC}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) });
    expect(r.status).toBe(200);
  }
  const share = (q: string, init?: RequestInit): Promise<Response> => fetch(`${node.url}/_share/${TOPIC}?group=${GROUP}${q}`, { ...init, signal: AbortSignal.timeout(10_000) });
  expect((await share('', { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify({ 'share.auto.offset.reset': 'earliest', 'group.share.record.lock.duration.ms': 5000 }) })).status).toBe(200);

  /** seq → [who accepted it, the delivery count it had]; a second acceptance is a failure. */
  const accepted = new Map<number, Array<[string, number]>>();
  const accept = (who: string, seq: number, deliveryCount: number): void => {
    const seen = accepted.get(seq);
    if (seen === undefined) accepted.set(seq, [[who, deliveryCount]]);
    else seen.push([who, deliveryCount]);
  };
  /** Seqs in acknowledgements sent but never answered (cut off by the kill): their outcome is unknown to the client. */
  const unknown = new Set<number>();
  let drained = false;
  const done = (): boolean => drained;
  let restarting: Promise<void> | null = null;
  const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  // A worker leases 50 records and dies: they come back once their 5 s lock ends.
  const dead = (await (await share('&op=lease&max=50', { method: 'POST' })).json()) as Lease;
  expect(dead.records.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i));

  const httpWorker = async (name: string): Promise<void> => {
    while (!done()) {
      try {
        await restarting;
        const r = await share('&op=lease&max=100&lock=30s', { method: 'POST' });
        if (r.status !== 200) throw new Error(`lease: ${r.status}`);
        const l = (await r.json()) as Lease;
        if (l.records.length === 0) {
          await pause(50);
          continue;
        }
        const counts = new Map(l.records.map((x) => [x.seq, x.deliveryCount]));
        let applied: number[];
        try {
          const a = await share('&op=ack', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ lease: l.lease, accept: l.records.map((x) => x.seq) }) });
          if (a.status !== 200) throw new Error(`ack: ${a.status}`);
          applied = ((await a.json()) as { applied: number[] }).applied;
        } catch (err) {
          for (const x of l.records) unknown.add(x.seq);
          throw err;
        }
        for (const seq of applied) accept(name, seq, counts.get(seq)!);
      } catch {
        // The node is being killed or restarted: what was not answered is not counted.
        await pause(100);
      }
    }
  };

  const kafkaMember = async (name: string): Promise<void> => {
    while (!done()) {
      let c: ShareWire | null = null;
      try {
        await restarting;
        c = await ShareWire.connect(node.kafka);
        const hb = await c.heartbeat({ groupId: GROUP, memberId: '', memberEpoch: 0, subscribedTopicNames: [TOPIC] });
        if (hb.errorCode !== 0) throw new Error(`heartbeat: ${hb.errorCode}`);
        const topicId = hb.assignment!.topicPartitions[0]!.topicId;
        let epoch = 0;
        let pending: Array<{ offset: number; deliveryCount: number }> = [];
        while (!done()) {
          const sent = pending;
          const res = await c.fetch({ groupId: GROUP, memberId: hb.memberId!, epoch, topicId, partitions: [0], maxWaitMs: 200, partitionMaxBytes: 64 * 1024, acks: sent.length === 0 ? {} : { 0: acksOf(sent.map((p) => p.offset), ACCEPT) } }).catch((err: unknown) => {
            for (const p of sent) unknown.add(p.offset);
            throw err;
          });
          if (res.errorCode !== 0) throw new Error(`share fetch: ${res.errorCode}`);
          epoch++;
          const got = gotOf(res)[0];
          if (got === undefined || got.errorCode !== 0) throw new Error(`share fetch partition: ${got?.errorCode}`);
          // The acknowledgements this fetch carried were applied (all of them) when its partition says 0.
          if (got.acknowledgeErrorCode === 0) for (const p of pending) accept(name, p.offset, p.deliveryCount);
          pending = got.records.map((x) => ({ offset: x.offset, deliveryCount: x.deliveryCount }));
        }
        if (pending.length > 0) {
          for (const p of pending) unknown.add(p.offset);
          const a = await c.acknowledge({ groupId: GROUP, memberId: hb.memberId!, epoch, topicId, acks: { 0: acksOf(pending.map((p) => p.offset), ACCEPT) } });
          if (a.errorCode === 0 && a.responses[0]?.partitions[0]?.errorCode === 0) for (const p of pending) accept(name, p.offset, p.deliveryCount);
        }
        await c.heartbeat({ groupId: GROUP, memberId: hb.memberId!, memberEpoch: -1 });
      } catch {
        // Killed node, closed connection, a session the restarted node does not know: join again.
        await pause(100);
      } finally {
        c?.close();
      }
    }
  };

  const workers = [...Array.from({ length: 8 }, (_, i) => httpWorker(`http-${i}`)), ...Array.from({ length: 4 }, (_, i) => kafkaMember(`kafka-${i}`))];
  // Halfway, the node is SIGKILLed and started again on its data directory.
  const deadline = Date.now() + 180_000;
  while (accepted.size < N / 2 && Date.now() < deadline) await pause(20);
  const atKill = accepted.size;
  restarting = (async () => {
    await node.kill();
    node = await startNode({ dataDir: node.dataDir, args: ARGS });
  })();
  await restarting;
  restarting = null;
  // Drained when the group's share partition starts past the last record.
  while (Date.now() < deadline) {
    const st = await share('')
      .then((r) => r.json() as Promise<{ startSeq: number | null }>)
      .catch(() => ({ startSeq: null }));
    if (st.startSeq === N) break;
    await pause(200);
  }
  drained = true;
  await Promise.all(workers);
  const doubles = [...accepted].filter(([, who]) => who.length > 1);
  expect(doubles.slice(0, 5)).toEqual([]);
  const missing = Array.from({ length: N }, (_, i) => i).filter((s) => !accepted.has(s) && !unknown.has(s));
  expect(missing.slice(0, 5)).toEqual([]);
  // The unknown ones are what was in flight when the node died: up to 8 HTTP acknowledgements of
  // 100 records and 4 Kafka fetches acknowledging up to 64 KiB of records each (some 3,600 in all;
  // 2,200 were seen on Node 24 in CI). Most records must still be known accepted.
  expect(accepted.size).toBeGreaterThan(N - 5000);
  expect(atKill).toBeGreaterThan(0);
  expect(atKill).toBeLessThan(N);

  // Both kinds of consumer took part, every Kafka member among them.
  const by = new Map<string, number>();
  for (const who of accepted.values()) by.set(who[0]![0], (by.get(who[0]![0]) ?? 0) + 1);
  for (let i = 0; i < 4; i++) expect(by.get(`kafka-${i}`) ?? 0).toBeGreaterThan(0);
  expect([...by].filter(([who]) => who.startsWith('http-')).reduce((n, [, k]) => n + k, 0)).toBeGreaterThan(0);
  // The dead worker's 50 records were accepted by others, delivered a second time (or more).
  for (let s = 0; s < 50; s++) expect(accepted.get(s)?.[0]?.[1] ?? (unknown.has(s) ? 2 : 0)).toBeGreaterThanOrEqual(2);

  // The group's stored state: nothing left, 100,000 acknowledgements, the 50 (and any record whose lock ended in the kill) delivered again.
  const g = (await (await fetch(`${node.adminUrl!}/admin/groups?group=${GROUP}`)).json()) as { groups: Array<{ share: { partitions: Array<{ startOffset: number; lag: number; inFlight: number; totals: { acknowledged: number; redelivered: number; archived: number } }> } }> };
  const p = g.groups[0]!.share.partitions[0]!;
  expect({ start: p.startOffset, lag: p.lag, acknowledged: p.totals.acknowledged, archived: p.totals.archived }).toEqual({ start: N, lag: 0, acknowledged: N, archived: 0 });
  expect(p.totals.redelivered).toBeGreaterThanOrEqual(50);
  await node.stop();
});
