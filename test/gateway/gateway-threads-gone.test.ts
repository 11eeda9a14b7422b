/**
 * A gateway thread that ends (src/gateway-threads.ts): the admin API answers a token change only
 * once every gateway thread has the new records, so a thread that died must be dropped, not
 * awaited for ever. The main thread's side runs here over real shard workers and a real token
 * store (from dist/); each "gateway thread" is a real worker thread holding its end of the control
 * channel, answering as gateway-thread.ts does, and terminated as a crashed thread would end.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type MessagePort, Worker } from 'node:worker_threads';
import type * as Actors from '../../src/actors';
import type * as Threads from '../../src/gateway-threads';
import type * as Shards from '../../src/shards';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actors = require('../../dist/actors') as typeof Actors;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GatewayThreads } = require('../../dist/gateway-threads') as typeof Threads;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const shards = require('../../dist/shards') as typeof Shards;

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const ROOT = { id: 'root', scope: actors.ROOT_SCOPE };
const SCOPE = { streams: [{ prefix: '/a/' }], ops: ['read' as const], audiences: ['svc' as const], groups: { stream: { read: true, write: false } } };

/**
 * A thread holding `port` (its control channel's end): acknowledges every message, as a gateway
 * thread does, unless `answers` is false (a thread stuck before it acknowledges).
 */
function thread(port: MessagePort, answers: boolean): Worker {
  const code = `
    const { workerData } = require('node:worker_threads');
    workerData.port.on('message', (m) => { if (workerData.answers) workerData.port.postMessage({ t: 'ack', id: m.id }); });
  `;
  return new Worker(code, { eval: true, workerData: { port, answers }, transferList: [port] });
}

/**
 * A thread holding `port` that takes every Kafka connection handed to it as gateway-thread.ts does
 * (it says `kafka-taken`, then owns the descriptor), or, with `reads` false, never reads its
 * channel at all (a thread that ends with the hand-over still unread).
 */
function kafkaThread(port: MessagePort, reads: boolean): Worker {
  const code = `
    const { workerData } = require('node:worker_threads');
    if (workerData.reads) workerData.port.on('message', (m) => {
      if (m.t === 'kafka-conn') workerData.port.postMessage({ t: 'kafka-taken', conn: m.conn });
      else if (m.t === 'figures') workerData.port.postMessage({ t: 'figures', id: m.id, figures: { liveReaders: { sse: 0, longPoll: 0 } } });
      else if (m.id !== undefined) workerData.port.postMessage({ t: 'ack', id: m.id });
    });
  `;
  return new Worker(code, { eval: true, workerData: { port, reads }, transferList: [port] });
}

/** What descriptor `fd` of this process is open on, or null when it is closed. */
function openOn(fd: number): string | null {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/** Resolves with `p`'s outcome, or with 'pending' if it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Wait for `cond` (a generous bound: the machine may be loaded). */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('gateway threads that end', () => {
  let dir: string;
  let meta: Actors.MetaStore;
  let client: Shards.ShardClient;
  const workers: Worker[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-gw-gone-'));
    meta = await actors.openLocalMetaStore(path.join(dir, 'meta'));
    client = await shards.ShardClient.start({
      dataDir: path.join(dir, 'data'),
      workers: 1,
      shards: 1,
      segmentBytes: 64 * 1024 * 1024,
      limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10_000 },
      retentionIntervalMs: 60_000,
      reaperIntervalMs: 60_000,
      log: silent,
      reserveBytes: 0,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.terminate()));
    await client?.close();
    await meta?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a token change answers once the threads still up have the records; a thread that ends, even while one waits for it, is dropped and logged', async () => {
    const tokens = new actors.Tokens(meta);
    const warnings: Array<{ o: object; m: string }> = [];
    const gateways = new GatewayThreads(client, tokens, { protocol: 'svc', sseReconnectMs: 60_000, dsSubscriptions: false, workers: 1, shardCount: 1, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10_000, maxRequestBytes: 1 << 20 } as never, longPollTimeoutMs: 1000, auth: true, corsOrigins: '', logLevel: 'error', logFormat: 'json', cluster: false, metrics: false, traces: null, kafka: null }, { warn: (o, m) => warnings.push({ o, m }) });
    const spec = gateways.spec();
    const [a, b, c] = [0, 1, 2].map((k) => spec.start(k).port);
    const up = thread(a!, true);
    const dies = thread(b!, true);
    const stuck = thread(c!, false);
    workers.push(up, dies, stuck);
    expect(gateways.size).toBe(3);

    // The stuck thread never acknowledges: the change waits for it…
    const first = tokens.issue(ROOT, { id: 'reader.1', scope: SCOPE });
    expect(await within(first, 500)).toBe('pending');
    // …until it ends: then the change answers without it.
    await stuck.terminate();
    expect(await within(first, 30_000)).toMatchObject({ id: 'reader.1' });
    expect(gateways.size).toBe(2);

    // A thread that ended between two changes is not waited for at all.
    await dies.terminate();
    await until(() => gateways.size === 1, 'the ended thread to be dropped');
    expect(await within(tokens.issue(ROOT, { id: 'reader.2', scope: SCOPE }), 30_000)).toMatchObject({ id: 'reader.2' });

    expect(warnings.map((w) => (w.o as { thread: string }).thread).sort()).toEqual(['svc-gw-2', 'svc-gw-3']);
    expect(warnings[0]!.m).toMatch(/gateway thread gone/);

    // At shutdown the last thread drains; its channel closing then is no news.
    const drained = gateways.drain();
    await drained;
    await up.terminate();
    await until(() => gateways.size === 0, 'the drained thread to be dropped');
    expect(warnings).toHaveLength(2);
  }, 120_000);

  test('a Kafka connection handed to a thread that ends before it takes it is closed by the main thread; one the thread took is the thread\'s', async () => {
    const gateways = new GatewayThreads(client, null, { protocol: 'svc', sseReconnectMs: 60_000, dsSubscriptions: false, workers: 1, shardCount: 1, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10_000, maxRequestBytes: 1 << 20 } as never, longPollTimeoutMs: 1000, auth: false, corsOrigins: '', logLevel: 'error', logFormat: 'json', cluster: false, metrics: false, traces: null, kafka: {} as never }, { warn: () => undefined });
    const closed: number[] = [];
    gateways.attach({ onMessage: (m: { t: string; conn?: number }) => void (m.t === 'kafka-closed' && closed.push(m.conn!)) } as never);
    const spec = gateways.spec();
    const file = path.join(dir, 'handed');
    fs.writeFileSync(file, '');

    // The thread never reads its channel: the descriptor handed to it is still the main thread's when it ends.
    const deaf = kafkaThread(spec.start(0).port, false);
    workers.push(deaf);
    const lost = fs.openSync(file, 'r');
    gateways.taker()!(lost, 1);
    expect(openOn(lost)).toBe(file);
    await deaf.terminate();
    await until(() => gateways.size === 0, 'the ended thread to be dropped');
    expect(openOn(lost)).not.toBe(file);
    expect(closed).toEqual([1]);

    // This one takes its descriptor: when it ends, the main thread leaves it alone (the thread's sockets close their own).
    const taker = kafkaThread(spec.start(1).port, true);
    workers.push(taker);
    const kept = fs.openSync(file, 'r');
    gateways.taker()!(kept, 2);
    // Its answer to a scrape comes after its kafka-taken on the one channel (a scrape gives up on a
    // thread after a second: asked again until this one has answered, however slow its start).
    while ((await gateways.figures()).length === 0) await sleep(20);
    await taker.terminate();
    await until(() => gateways.size === 0, 'the second thread to be dropped');
    expect(openOn(kept)).toBe(file);
    expect(closed).toEqual([1, 2]);
    fs.closeSync(kept);
  }, 60_000);
});
