/**
 * A shard worker whose storage fails (here: every RocksDB index write fails, injected through the
 * test-only hook src/shards/worker/test-faults.ts, so the checkpoint timer throws) must not leave
 * requests hanging: its in-flight and later calls fail at once with 503 storage_unavailable on
 * every listener in that listener's own shape, /ready turns 503, the failure is logged at error,
 * and once the fault is gone the worker is restarted and recovers its shards from their logs with
 * every acknowledged record there exactly once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { RawKafka } from '../kafka/kafka-test-client';
import { batchOf, produce } from '../kafka/raw-produce';

const KAFKA_STORAGE_ERROR = 56;

async function until<T>(what: string, f: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a shard worker whose index writes fail', () => {
  const dataDir = tempDir('svc-faults-');
  const faults = path.join(tempDir('svc-faults-ctl-'), 'faults');
  let node: NodeProcess;
  let kafka: RawKafka;
  /** A long-poll on /f/live started before the fault (answered after the restart). */
  let poll: Promise<Response> | null = null;
  /** Bodies acknowledged with 200, in seq order. */
  const acked: Array<{ seq: number; body: string }> = [];

  const append = async (body: string, timeoutMs = 10_000): Promise<Response> => {
    const res = await fetch(`${node.url}/f/a`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body, signal: AbortSignal.timeout(timeoutMs) });
    if (res.status === 200) acked.push({ seq: Number(res.headers.get('svc-start-seq')), body });
    return res;
  };
  const ready = async (): Promise<{ status: number; doc: Record<string, unknown> }> => {
    const res = await fetch(`${node.adminUrl}/ready`);
    return { status: res.status, doc: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    node = await startNode({
      dataDir,
      args: ['--shards', '1', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0', '--long-poll-timeout', '50000'],
      env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults },
    });
    kafka = await RawKafka.connect(node.kafka);
    expect((await fetch(`${node.url}/f/a`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await append(`before-${i}`)).status).toBe(200);
    // A stream of application/octet-stream is a Kafka topic of the same name.
    expect((await fetch(`${node.url}/f-k`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
    expect((await produce(kafka, 'f-k', batchOf(['k0']))).errorCode).toBe(0);
    expect((await fetch(`${node.url}/f/live`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await ready()).status).toBe(200);
  });
  afterAll(() => {
    kafka?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(faults), { recursive: true, force: true });
  });

  test('in-flight appends are answered (200 or 503), none hangs, and /ready turns 503 with the cause', async () => {
    poll = fetch(`${node.url}/f/live?seq=0&live=long-poll`, { signal: AbortSignal.timeout(60_000) });
    await new Promise((r) => setTimeout(r, 200)); // the poll is waiting (its stream watched) before the fault
    fs.writeFileSync(faults, 'index-write');
    // Appends keep coming while the checkpoint timer hits the fault and the worker stops.
    const statuses: number[] = [];
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 8 }, async (_, c) => {
        for (let i = 0; Date.now() - started < 1500; i++) {
          const res = await append(`during-${c}-${i}`);
          statuses.push(res.status);
          if (res.status !== 200) {
            expect(res.status).toBe(503);
            expect(await res.json()).toMatchObject({ error: 'storage_unavailable' });
          }
        }
      }),
    );
    expect(statuses).toContain(503);
    const r = await until('/ready to answer 503', async () => {
      const x = await ready();
      return x.status === 503 ? x : null;
    });
    expect(r.doc['ready']).toBe(false);
    expect(r.doc['unavailable']).toEqual([expect.objectContaining({ worker: 0, shards: [0], error: expect.stringContaining('injected index write failure') })]);
    // Logged at level error, naming the worker and its shards.
    const line = node.output().split('\n').find((l) => l.includes('shard worker stopped'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 'error', worker: 0, shards: [0] });
  });

  test('while it is down, every listener fails at once in its own shape', async () => {
    let t = Date.now();
    const res = await append('while-down', 2000);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toMatchObject({ error: 'storage_unavailable', message: expect.stringContaining('unavailable') });
    const read = await fetch(`${node.url}/f/a?seq=0`, { signal: AbortSignal.timeout(2000) });
    expect(read.status).toBe(503);
    expect(Date.now() - t).toBeLessThan(1000);
    // Let the Kafka listener's topic index go stale (2 s), so the Produce below must rebuild it while
    // the worker is down: the listing fails, and the Produce still gets an answer in Kafka's shape.
    await new Promise((r) => setTimeout(r, 2100));

    t = Date.now();
    const ds = await fetch(`${node.dsUrl}/v1/stream/f/a`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'ds', signal: AbortSignal.timeout(2000) });
    expect(ds.status).toBe(503);
    expect(ds.headers.get('content-type')).toContain('text/plain');
    expect(await ds.text()).toContain('unavailable');

    const p = await produce(kafka, 'f-k', batchOf(['k1']));
    expect(p.errorCode).toBe(KAFKA_STORAGE_ERROR);
    expect(Date.now() - t).toBeLessThan(1000);
  });

  test('once the fault is gone the worker is restarted, recovers from its log, and every acknowledged record is there once', async () => {
    fs.rmSync(faults);
    await until('/ready to answer 200 again', async () => ((await ready()).status === 200 ? true : null), 40_000);
    expect(node.output()).toContain('shard worker restarted');
    expect((await append('after')).status).toBe(200);
    const res = await fetch(`${node.url}/f/a?seq=0&count=100000`);
    expect(res.status).toBe(200);
    const records = (await res.json()) as Array<{ seq: number; body: string }>;
    records.forEach((r, i) => expect(r.seq).toBe(i)); // dense: nothing lost in the middle, nothing twice
    const bySeq = new Map(records.map((r) => [r.seq, r.body]));
    for (const a of acked) expect(bySeq.get(a.seq)).toBe(a.body);
    expect(new Set(records.map((r) => r.body)).size).toBe(records.length);
    expect((await produce(kafka, 'f-k', batchOf(['k2']))).errorCode).toBe(0);
  }, 60_000);

  test('a long-poll that waited through the failure is woken by the restarted worker', async () => {
    const t = Date.now();
    const res = await fetch(`${node.url}/f/live`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'live-after' });
    expect(res.status).toBe(200);
    const answered = await poll!;
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as Array<{ body: string }>).map((r) => r.body)).toEqual(['live-after']);
    expect(Date.now() - t).toBeLessThan(5000);
  }, 60_000);

  test('SIGTERM while the worker is down again stops the node cleanly, without the shutdown watchdog', async () => {
    fs.writeFileSync(faults, 'index-write');
    await append('trigger');
    await until('/ready to answer 503 again', async () => ((await ready()).status === 503 ? true : null));
    const t = Date.now();
    expect(await node.stop()).toBe(0);
    expect(Date.now() - t).toBeLessThan(5000);
  });
});
