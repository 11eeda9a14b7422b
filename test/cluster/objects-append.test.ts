/**
 * Objects mode on one node (docs/cluster.md, "Objects mode: where data lives"): a real node
 * process with `--metadata etcd://…` (one Debian etcd member) and `--objects file:<dir>`.
 * Acknowledged appends are found through the ledger once it has recorded them (entries → byte
 * ranges of group objects → frames with good CRCs and the acknowledged seqs); a fence moved away
 * the way an opener moves it (fence, then tail recovery, which fences the writer's next object
 * name) makes the next append `moved` (HTTP 503, Kafka NOT_LEADER_OR_FOLLOWER) and nothing of it
 * visible; with etcd down appends are acknowledged while the ledger's lag stays within its bound,
 * then get 503 without the node crashing, and once etcd is back every acknowledged one is recorded.
 */
import { randomBytes } from 'node:crypto';
import { type Ledger, recoverTail } from '../../src/objects';
import { RawKafka } from '../kafka/kafka-test-client';
import { platformatic } from '../kafka/platformatic';
import { batchOf, initProducerId, produce } from '../kafka/raw-produce';
import { objectsNodeForFile } from './objects-node';
import { RECORDS_FORMAT, fromObjects as readObjects, recorded } from './objects-read';

jest.setTimeout(120_000);

const c = objectsNodeForFile({ shards: 2 });
let nodeId: number;

beforeAll(async () => {
  nodeId = ((await (await fetch(`${c.node.adminUrl!}/admin/cluster`)).json()) as { nodeId: number }).nodeId;
});

const create = (name: string, contentType = 'text/plain'): Promise<Response> => fetch(`${c.node.url}${name}`, { method: 'PUT', headers: { 'content-type': contentType } });
const append = (name: string, body: string): Promise<Response> => fetch(`${c.node.url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });

/**
 * Groups are acknowledged once their object is durable and recorded in the ledger right after
 * (docs/cluster.md): wait (≤ 10 s) until what the ledger records (entries, or part records not
 * indexed yet in the records format) reaches `seq`.
 */
async function recordedTo(name: string, seq: number): Promise<void> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const ranges = await recorded(c.ledger, name);
    if (ranges.length > 0 && ranges[ranges.length - 1]!.to >= seq) return;
  }
  throw new Error(`${name}: the ledger did not record seqs up to ${seq} within 10 s`);
}

const fromObjects = (name: string): ReturnType<typeof readObjects> => readObjects(c.ledger, c.store, name);

test('acknowledged appends are durable in the object store, found through the ledger with their seqs and CRCs', async () => {
  const name = `/oa-${randomBytes(3).toString('hex')}`;
  expect((await create(name)).status).toBe(201);
  const acked: Array<[number, string]> = [];
  for (let round = 0; round < 3; round++) {
    // Concurrent appends share group commits (and objects); each is acknowledged with its seq.
    const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => append(name, `r${round}-${i}`)));
    for (const [i, r] of rs.entries()) {
      expect(r.status).toBeLessThan(300);
      acked.push([Number(r.headers.get('svc-next-seq')) - 1, `r${round}-${i}`]);
    }
  }
  await recordedTo(name, 30);
  const { records, frames } = await fromObjects(name);
  expect(records.sort((a, b) => a[0] - b[0])).toEqual(acked.sort((a, b) => a[0] - b[0]));
  expect(records.map(([seq]) => seq)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  // The CREATE frame is in the stream's first entry (the records format's opener and indexer take
  // no part without records: the stream's meta is in m/).
  if (!RECORDS_FORMAT) expect(frames[0]).toBe(2);
  const entries = await recorded(c.ledger, name);
  // Each group's part, numbered in order under the stream's fence (the records format's indexer
  // may have joined some already, into an object of its own, under the first one's number).
  if (!RECORDS_FORMAT) {
    expect(entries.every((e) => e.epoch === 1 && e.o.startsWith(`g/${nodeId}/`))).toBe(true);
    expect(entries.map((e) => e.counter)).toEqual(entries.map((_, i) => i));
  } else expect(entries.every((e) => e.epoch === 1)).toBe(true);
  await expect(c.ledger.fence(name)).resolves.toEqual({ nodeId, epoch: 1 });
  await expect(c.ledger.meta(name)).resolves.toMatchObject({ meta: { name, contentType: 'text/plain' }, startSeq: 0, sealed: false });
  // The shards' object PUTs are counted (docs/metrics.md, svc_object_store_*).
  const metrics = await (await fetch(`${c.node.adminUrl!}/metrics`)).text();
  const puts = /^svc_object_store_requests_total\{op="put",outcome="ok"\} (\d+)/m.exec(metrics);
  expect(Number(puts?.[1])).toBeGreaterThanOrEqual(entries.length);
  // Each ledger transaction is timed (svc_objects_ledger_commit_seconds); one records several groups.
  const txns = /^svc_objects_ledger_commit_seconds_count (\d+)/m.exec(metrics);
  expect(Number(txns?.[1])).toBeGreaterThanOrEqual(1);
  expect(Number(/^svc_objects_ledger_commit_seconds_sum (\S+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);
  // The node reads its local copy: the same records.
  const read = await fetch(`${c.node.url}${name}?format=json`);
  expect(((await read.json()) as Array<{ seq: number }>).map((r) => r.seq)).toEqual(acked.map(([seq]) => seq));
});

test('a seal and a trim reach the stream\'s m/ record', async () => {
  const name = `/om-${randomBytes(3).toString('hex')}`;
  expect((await create(name)).status).toBe(201);
  for (let i = 0; i < 5; i++) expect((await append(name, `x${i}`)).status).toBeLessThan(300);
  expect((await fetch(`${c.node.url}${name}`, { method: 'POST', headers: { 'svc-trim-seq': '3' } })).status).toBeLessThan(300);
  expect((await fetch(`${c.node.url}${name}`, { method: 'POST', headers: { 'svc-closed': 'true' } })).status).toBeLessThan(300);
  await expect(c.ledger.meta(name)).resolves.toMatchObject({ startSeq: 3, sealed: true });
});

test('TTL expiry moves the start in m/ and drops the expired entries from the ledger', async () => {
  const name = `/ot-${randomBytes(3).toString('hex')}`;
  expect((await fetch(`${c.node.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain', 'svc-ttl': '1' } })).status).toBe(201);
  for (let i = 0; i < 3; i++) expect((await append(name, `t${i}`)).status).toBeLessThan(300);
  let meta = await c.ledger.meta(name);
  for (const end = Date.now() + 15_000; (meta?.startSeq ?? 0) < 3 && Date.now() < end; meta = await c.ledger.meta(name)) await new Promise((r) => setTimeout(r, 200));
  expect(meta?.startSeq).toBe(3);
  if (RECORDS_FORMAT) {
    // The parts were recorded before the start moved and not indexed yet: the indexer gives them
    // no entry (none would ever be removed), once their records settle.
    let ranges = await recorded(c.ledger, name);
    for (const end = Date.now() + 30_000; ranges.length > 0 && Date.now() < end; ranges = await recorded(c.ledger, name)) await new Promise((r) => setTimeout(r, 200));
    expect(ranges).toEqual([]);
    return;
  }
  // Every entry wholly below the start goes, but the newest, which stays whatever its seqs (tail
  // recovery starts from it; readers skip it).
  const expired = (es: Awaited<ReturnType<Ledger['entries']>>) => es.filter((e, i) => e.to <= 3 && i < es.length - 1);
  let entries = await c.ledger.entries(name);
  for (const end = Date.now() + 5000; expired(entries).length > 0 && Date.now() < end; entries = await c.ledger.entries(name)) await new Promise((r) => setTimeout(r, 100));
  expect(expired(entries)).toEqual([]);
  expect(entries.length).toBeGreaterThan(0);
});

test('a delete removes the stream from the ledger under its fence, so the name is free', async () => {
  const name = `/od-${randomBytes(3).toString('hex')}`;
  expect((await create(name)).status).toBe(201);
  for (let i = 0; i < 3; i++) expect((await append(name, `d${i}`)).status).toBeLessThan(300);
  await recordedTo(name, 3);
  expect((await fetch(`${c.node.url}${name}`, { method: 'DELETE' })).status).toBeLessThan(300);
  await expect(c.ledger.entries(name)).resolves.toEqual([]);
  await expect(recorded(c.ledger, name)).resolves.toEqual([]);
  await expect(c.ledger.meta(name)).resolves.toBeNull();
  await expect(c.ledger.fence(name)).resolves.toBeNull();
  // Created again: a new stream, epoch 1 again.
  expect((await create(name)).status).toBe(201);
  expect((await append(name, 'new')).status).toBeLessThan(300);
  await recordedTo(name, 1);
  expect((await fromObjects(name)).records).toEqual([[0, 'new']]);
});

test('a fence moved to another node makes the next append `moved`, and nothing of it is stored or visible', async () => {
  const name = `/of-${randomBytes(3).toString('hex')}`;
  expect((await create(name)).status).toBe(201);
  expect((await append(name, 'kept')).status).toBeLessThan(300);
  // Another node opens the stream (a transfer or a failover moves the fence this way): it takes
  // the fence, then records what the writer acknowledged and did not record yet, fencing the
  // writer's next object name.
  const other = { nodeId: nodeId + 100, epoch: 2 };
  await expect(c.ledger.takeFence(name, other, { from: { nodeId, epoch: 1 } })).resolves.toMatchObject({ ok: true });
  await recoverTail(c.ledger, c.store, name, other);
  const refused = await append(name, 'lost');
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(((await refused.json()) as { error: string }).error).toBe('moved');
  // The stream takes no more appends here, and the refused one is not readable.
  const again = await append(name, 'lost too');
  expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([503, 'moved']);
  const read = await fetch(`${c.node.url}${name}?format=json`);
  expect(((await read.json()) as Array<{ body: string }>).map((r) => r.body)).toEqual(['kept']);
  expect((await fromObjects(name)).records.map(([, v]) => v)).toEqual(['kept']);

  // Kafka: the same for a partition's stream.
  const topic = `ok-${randomBytes(3).toString('hex')}`;
  expect(await platformatic({ op: 'admin', broker: c.node.kafka, create: [{ topic, partitions: 1 }] })).toMatchObject({ ok: true });
  const k = await RawKafka.connect(c.node.kafka);
  try {
    expect((await produce(k, topic, batchOf(['one']))).errorCode).toBe(0);
    await c.ledger.takeFence(`/${topic}`, other, { from: { nodeId, epoch: 1 } });
    await recoverTail(c.ledger, c.store, `/${topic}`, other);
    expect((await produce(k, topic, batchOf(['two']))).errorCode).toBe(6); // NOT_LEADER_OR_FOLLOWER
  } finally {
    k.close();
  }
  expect((await fromObjects(`/${topic}`)).records.map(([, v]) => v)).toEqual(['one']);
});

test('with etcd down appends are acknowledged while the ledger lags within its bound, then get 503 and the node stays up; once etcd is back every acknowledged one is recorded', async () => {
  const name = `/oe-${randomBytes(3).toString('hex')}`;
  expect((await create(name)).status).toBe(201);
  expect((await append(name, 'before')).status).toBeLessThan(300);
  await recordedTo(name, 1);
  await c.etcd.kill(0);
  // The object store still takes the groups: acknowledged, unrecorded, up to 64 groups (one per
  // append here); the next waits for the ledger and is answered 503 after the stall limit (5 s).
  const acked: string[] = [];
  const t0 = Date.now();
  let during: Response | null = null;
  for (let i = 0; i < 100; i++) {
    during = await append(name, `during-${i}`);
    if (during.status >= 300) break;
    acked.push(`during-${i}`);
  }
  expect(during?.status).toBe(503);
  expect(acked.length).toBeGreaterThan(0);
  expect(acked.length).toBeLessThanOrEqual(66);
  expect(Date.now() - t0).toBeLessThan(15_000);
  // While that one is still waiting for etcd, later writes are refused at once.
  const refused = await append(name, 'refused');
  expect(refused.status).toBe(503);
  expect(c.node.proc.exitCode).toBeNull();
  c.etcd.startMember(0);
  await c.etcd.waitHealthy(30_000);
  let after: Response | null = null;
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
    after = await append(name, 'after');
    if (after.status < 300) break;
  }
  expect(after?.status).toBeLessThan(300);
  expect(c.node.proc.exitCode).toBeNull();
  await recordedTo(name, Number(after!.headers.get('svc-next-seq')));
  const values = (await fromObjects(name)).records.map(([, v]) => v);
  // Everything acknowledged while etcd was away is in the ledger now, in order. The one answered
  // 503 (its outcome unknown, as after a timeout) may be stored; 'refused' never is.
  expect(values[0]).toBe('before');
  expect(values.slice(1, 1 + acked.length)).toEqual(acked);
  expect(values[values.length - 1]).toBe('after');
  expect(values).not.toContain('refused');
});

test('with etcd down an idempotent producer\'s produce that may still be written answers REQUEST_TIMED_OUT, not KAFKA_STORAGE_ERROR; retried with the same epoch and sequence once etcd is back, each batch is stored once, in order', async () => {
  const topic = `oi-${randomBytes(3).toString('hex')}`;
  expect(await platformatic({ op: 'admin', broker: c.node.kafka, create: [{ topic, partitions: 1 }] })).toMatchObject({ ok: true });
  const k = await RawKafka.connect(c.node.kafka);
  let doubtful: number;
  try {
    const { producerId: id, producerEpoch: epoch } = await initProducerId(k);
    const send = (seq: number): ReturnType<typeof produce> => produce(k, topic, batchOf([`p${seq}`], { id, epoch, seq }));
    expect((await send(0)).errorCode).toBe(0);
    await recordedTo(`/${topic}`, 1);
    await c.etcd.kill(0);
    let seq = 1;
    let code = 0;
    for (; seq < 200; seq++) {
      code = (await send(seq)).errorCode;
      if (code !== 0) break;
    }
    // The batch whose group outlived the stall limit may still be written: Kafka's REQUEST_TIMED_OUT
    // (7), so a client retries it with the same epoch and sequence rather than bumping the epoch.
    expect(code).toBe(7);
    doubtful = seq;
    // The next is refused at once while that group waits, and answered the same way.
    expect((await send(doubtful + 1)).errorCode).toBe(7);
    c.etcd.startMember(0);
    await c.etcd.waitHealthy(30_000);
    for (const retry of [doubtful, doubtful + 1]) {
      let r = await send(retry);
      for (const end = Date.now() + 30_000; r.errorCode !== 0 && Date.now() < end; r = await send(retry)) await new Promise((res) => setTimeout(res, 200));
      expect({ retry, code: r.errorCode, offset: r.baseOffset }).toEqual({ retry, code: 0, offset: BigInt(retry) });
    }
    await recordedTo(`/${topic}`, doubtful + 2);
  } finally {
    k.close();
  }
  const values = (await fromObjects(`/${topic}`)).records.map(([, v]) => v);
  expect(values).toEqual(Array.from({ length: doubtful + 2 }, (_, i) => `p${i}`));
});
