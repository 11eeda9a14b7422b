/**
 * Clients that append to one stream each, for as long as they run, through whatever happens to
 * the cluster (transfers, failover): Svc HTTP (JSON batches with key and headers), Durable Streams
 * (one message per POST) and Kafka (kafkajs, acks=all, key and headers). Each follows 307s and
 * retries refused or failed appends on another node, and keeps every acknowledged record with the
 * seq it was acknowledged at, so a test can check that all of them are readable afterwards.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { type ObjectsCluster, sleep } from './objects-cluster';

export interface Acked {
  seq: number;
  body: string;
  key: string | null;
  headers: Record<string, string> | null;
  /** When the acknowledgement came (ms). */
  at: number;
  /** When the append that got it was sent (ms; for Kafka, when `send` was called). */
  sent: number;
}

export interface Writer {
  readonly stream: string;
  readonly kind: 'svc' | 'ds' | 'kafka';
  readonly acked: Acked[];
  /** Attempts that got no acknowledgement (errors, 5xx, timeouts). */
  failures: number;
  /** Why the last failed attempt failed. */
  lastError?: string;
  /** The failed attempts: when each was sent and ended (ms) and why it failed (the newest 1,000). */
  readonly failed: Array<{ sent: number; at: number; error: string }>;
  stop(): Promise<void>;
}

type Urls = () => string[];

/** A request that follows 307s (at most 5 hops); throws on a network error. */
export async function follow(url: string, init: RequestInit): Promise<Response> {
  let at = url;
  for (let i = 0; i < 5; i++) {
    const r = await fetch(at, { ...init, redirect: 'manual', signal: AbortSignal.timeout(8_000) });
    if (r.status !== 307) return r;
    await r.arrayBuffer();
    at = r.headers.get('location')!;
  }
  throw new Error('too many redirects');
}

/**
 * Create a stream as a client does: a `503 storage_unavailable` is retriable (its outcome is
 * unknown; a retried create of the same stream answers 200), tried again for up to 30 s. Just
 * after a cluster's start the first group of a node can wait past the 5 s stall on etcd or the
 * object store (seen once in CI with s3:// through svc-cache).
 */
async function create(url: string): Promise<Response> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await follow(url, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    if (r.status !== 503 || Date.now() > deadline) return r;
    await r.arrayBuffer();
    await sleep(500);
  }
}

abstract class Loop implements Writer {
  readonly acked: Acked[] = [];
  failures = 0;
  lastError?: string;
  readonly failed: Array<{ sent: number; at: number; error: string }> = [];
  #stopped = false;
  #done: Promise<void> = Promise.resolve();
  #n = 0;

  constructor(
    readonly stream: string,
    readonly kind: 'svc' | 'ds' | 'kafka',
  ) {}

  start(): this {
    this.#done = (async () => {
      while (!this.#stopped) {
        const i = this.#n++;
        const sent = Date.now();
        const ok = await this.append(i).catch((err: unknown) => {
          this.lastError = String(err);
          return false;
        });
        if (!ok) {
          this.failures++;
          this.failed.push({ sent, at: Date.now(), error: this.lastError ?? '' });
          if (this.failed.length > 1000) this.failed.shift();
          await sleep(50);
        }
      }
    })();
    return this;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
    await this.close();
  }

  protected abstract append(i: number): Promise<boolean>;
  protected async close(): Promise<void> {}
}

class SvcWriter extends Loop {
  #try = 0;
  constructor(stream: string, private readonly urls: Urls) {
    super(stream, 'svc');
  }

  protected async append(i: number): Promise<boolean> {
    const sent = Date.now();
    const all = this.urls();
    const base = all[this.#try++ % all.length]!;
    const rec = { body: `${this.stream}#${i}`, key: `k${i}`, headers: { h: `v${i}`, w: 'svc' } };
    const r = await follow(`${base}${this.stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: [rec] }) });
    const text = await r.text();
    if (r.status !== 200) {
      this.lastError = `${r.status} ${text}`;
      return false;
    }
    this.#try--;
    this.acked.push({ seq: Number(r.headers.get('svc-start-seq')), ...rec, at: Date.now(), sent });
    return true;
  }
}

class DsWriter extends Loop {
  #try = 0;
  constructor(stream: string, private readonly urls: Urls) {
    super(stream, 'ds');
  }

  protected async append(i: number): Promise<boolean> {
    const sent = Date.now();
    const all = this.urls();
    const base = all[this.#try++ % all.length]!;
    const body = `${this.stream}#${i}`;
    const r = await follow(`${base}/v1/stream${this.stream}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
    const text = await r.text();
    if (r.status !== 200 && r.status !== 204) {
      this.lastError = `${r.status} ${text}`;
      return false;
    }
    this.#try--;
    const next = r.headers.get('stream-next-offset')!;
    this.acked.push({ seq: Number(next.split('_')[1]) - 1, body, key: null, headers: null, at: Date.now(), sent });
    return true;
  }
}

class KafkaWriter extends Loop {
  #producer: Producer | null = null;
  #connected: Promise<void> | null = null;
  constructor(
    stream: string,
    private readonly topic: string,
    private readonly brokers: () => string[],
  ) {
    super(stream, 'kafka');
  }

  protected async append(i: number): Promise<boolean> {
    if (this.#producer === null) {
      // Bootstrapped from the nodes running now (a node that came back listens on a new port here).
      const kafka = new Kafka({ clientId: `w-${this.topic}`, brokers: this.brokers(), logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 }, connectionTimeout: 2000, requestTimeout: 5000 });
      this.#producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 } });
      this.#connected = this.#producer.connect();
    }
    const producer = this.#producer;
    try {
      await this.#connected;
      const sent = Date.now();
      const body = `${this.stream}#${i}`;
      const [meta] = await producer.send({ topic: this.topic, acks: -1, messages: [{ key: `k${i}`, value: body, headers: { h: `v${i}`, w: 'kafka' } }] });
      this.acked.push({ seq: Number(meta!.baseOffset), body, key: `k${i}`, headers: { h: `v${i}`, w: 'kafka' }, at: Date.now(), sent });
      return true;
    } catch (err) {
      // As a client whose retries ran out would: start again from the bootstrap servers.
      this.#producer = null;
      await producer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  protected async close(): Promise<void> {
    await this.#producer?.disconnect().catch(() => undefined);
  }
}

/** Svc URLs of the running nodes. */
export const svcUrls = (c: ObjectsCluster): Urls => () => [...c.nodes.values()].map((n) => n.url);
export const dsUrls = (c: ObjectsCluster): Urls => () => [...c.nodes.values()].map((n) => n.dsUrl!);

/** Create the stream (Svc PUT through any node) and start appending. */
export async function svcWriter(c: ObjectsCluster, stream: string): Promise<Writer> {
  const r = await create(`${c.any().url}${stream}`);
  if (r.status !== 201 && r.status !== 200) throw new Error(`PUT ${stream}: ${r.status} ${await r.text()}`);
  return new SvcWriter(stream, svcUrls(c)).start();
}

export async function dsWriter(c: ObjectsCluster, stream: string): Promise<Writer> {
  const r = await create(`${c.any().dsUrl!}/v1/stream${stream}`);
  if (r.status !== 201 && r.status !== 200) throw new Error(`PUT ${stream}: ${r.status} ${await r.text()}`);
  return new DsWriter(stream, dsUrls(c)).start();
}

/** A one-partition topic (its stream is `/<topic>`), created with kafkajs admin, then a kafkajs producer with acks=all. */
export async function kafkaWriter(c: ObjectsCluster, topic: string): Promise<Writer> {
  const brokers = [...c.nodes.values()].map((n) => n.kafka);
  const admin = new Kafka({ clientId: 'admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  return new KafkaWriter(`/${topic}`, topic, () => [...c.nodes.values()].map((n) => n.kafka)).start();
}

export interface ReadRecord {
  seq: number;
  body?: string | null;
  key?: string | null;
  headers?: Record<string, string>;
}

/** Every record of `stream`, read over the Svc listener (following redirects) from `seq` 0. */
export async function readAll(c: ObjectsCluster, stream: string): Promise<ReadRecord[]> {
  const out: ReadRecord[] = [];
  let seq = 0;
  for (;;) {
    const r = await follow(`${c.any().url}${stream}?seq=${seq}&count=1000&format=json`, { method: 'GET' });
    if (r.status !== 200) throw new Error(`read ${stream} at ${seq}: ${r.status} ${await r.text()}`);
    const page = (await r.json()) as ReadRecord[];
    out.push(...page);
    const next = Number(r.headers.get('svc-next-seq'));
    if (page.length === 0 || r.headers.get('svc-up-to-date') === 'true') break;
    seq = next;
  }
  return out;
}

/**
 * Acknowledged records of `w` missing from the stream now, while `w` may still be appending: the
 * acknowledgements are taken before the read starts, so one that arrives during the read (at a seq
 * past what the read returned) is not counted as lost.
 */
export async function lostRecords(c: ObjectsCluster, w: Writer): Promise<string[]> {
  const acked = w.acked.slice();
  return missing({ stream: w.stream, acked }, await readAll(c, w.stream));
}

/**
 * Every record of `w`'s stream read back, and the acknowledged ones missing or different
 * (missing()). When some are, it prints what the test needs to find where they went
 * (explainLoss): the stream's state, the writer's acknowledgements and failures and the records
 * read around each such seq, each node's own read there, the nodes' log lines naming the stream,
 * and its ledger keys in etcd (fence, place, tail walks, entries near the seq, h/ marks).
 */
export async function readChecked(c: ObjectsCluster, w: Writer): Promise<{ records: ReadRecord[]; lost: string[] }> {
  const records = await readAll(c, w.stream);
  const bad = badAcks(w, records);
  if (bad.length > 0) console.error(await explainLoss(c, w, records, bad.map((a) => a.seq)));
  return { records, lost: asText(w.stream, bad, records) };
}

/** Every node's output so far, into one file per node under the system's temporary directory; each node's last `max` lines that name `stream`. */
function nodeLogs(c: ObjectsCluster, stream: string, max: number): { dir: string; lines: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-loss-'));
  const lines: string[] = [];
  for (const [id, n] of c.nodes) {
    const text = n.output();
    fs.writeFileSync(path.join(dir, `node-${id}.log`), text);
    const named = text.split('\n').filter((l) => l.includes(stream));
    for (const l of named.slice(-max)) lines.push(`node ${id}: ${l.slice(0, 400)}`);
  }
  return { dir, lines };
}

async function explainLoss(c: ObjectsCluster, w: Writer, records: readonly ReadRecord[], seqs: readonly number[]): Promise<string> {
  const out: string[] = [];
  const last = records[records.length - 1];
  const detail = await c.detail(w.stream).catch((err: unknown) => (err as Error).message);
  out.push(`--- ${w.stream}: ${records.length} records read, the last seq ${last?.seq ?? 'none'}; ${w.acked.length} acked, the last at seq ${w.acked[w.acked.length - 1]?.seq ?? 'none'}; ${w.failures} failed attempts; detail ${JSON.stringify(detail)}`);
  for (const f of w.failed.slice(-5)) out.push(`failed (of the last) ${JSON.stringify(f)}`);
  const logs = nodeLogs(c, w.stream, 15);
  out.push(`--- the nodes' logs: ${logs.dir}; each one's last 15 lines naming ${w.stream}:`, ...logs.lines);
  const enc = encodeURIComponent(w.stream);
  let ledger: string[] = [];
  try {
    const text = c.etcd.etcdctl('get', '--prefix', c.metadataUrl.replace(/^etcds?:\/\/[^/]*\//, ''));
    const lines = text.split('\n');
    for (let i = 0; i + 1 < lines.length; i += 2) ledger.push(`${lines[i]} = ${lines[i + 1]}`);
    ledger = ledger.filter((l) => (/\.objects\/[fwtiuk]\//.test(l) ? l.includes(enc) : /\.objects\/h\//.test(l)));
  } catch (err) {
    ledger = [`etcdctl failed: ${(err as Error).message}`];
  }
  const near = (from: number, to: number): boolean => seqs.some((seq) => to >= seq - 3 && from <= seq + 3);
  for (const seq of seqs.slice(0, 3)) {
    const i = w.acked.findIndex((a) => a.seq === seq);
    out.push(`--- ${w.stream} seq ${seq}`);
    // Read there again on every node, without following: a read that stops early shows here.
    for (const [id, n] of c.nodes) out.push(`node ${id} reads: ${await readAt(n.url, w.stream, seq)}`);
    for (const a of w.acked.slice(Math.max(0, i - 3), i + 4)) out.push(`acked ${JSON.stringify(a)}`);
    for (const r of records.filter((x) => Math.abs(x.seq - seq) <= 3)) out.push(`read ${JSON.stringify(r)}`);
    const at = w.acked[i]?.at ?? 0;
    for (const f of w.failed.filter((x) => Math.abs(x.sent - at) < 3_000)) out.push(`failed ${JSON.stringify(f)}`);
  }
  for (const l of ledger) {
    const m = /\/i\/.*"from":(\d+),"to":(\d+)/.exec(l);
    if (!/\/i\//.test(l) || (m !== null && near(Number(m[1]), Number(m[2])))) out.push(l);
  }
  return out.join('\n');
}

/** One direct read of three records from `seq` (no redirect followed), as a line: status, position headers, body. */
async function readAt(base: string, stream: string, seq: number): Promise<string> {
  try {
    const r = await fetch(`${base}${stream}?seq=${seq}&count=3&format=json`, { redirect: 'manual', signal: AbortSignal.timeout(8_000) });
    const h = ['location', 'svc-next-seq', 'svc-up-to-date'].map((k) => `${k}=${r.headers.get(k)}`).join(' ');
    return `${r.status} ${h} ${(await r.text()).slice(0, 300)}`;
  } catch (err) {
    return `failed: ${(err as Error).message}`;
  }
}

/** Acknowledged records of `w` missing or different in `records` (seq, body, key, headers). */
function badAcks(w: Pick<Writer, 'acked'>, records: readonly ReadRecord[]): Acked[] {
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  return w.acked.filter((a) => {
    const r = bySeq.get(a.seq);
    return !(r !== undefined && r.body === a.body && (a.key === null || r.key === a.key) && (a.headers === null || JSON.stringify(r.headers) === JSON.stringify(a.headers)));
  });
}

/** badAcks() as text. */
export function missing(w: Pick<Writer, 'stream' | 'acked'>, records: readonly ReadRecord[]): string[] {
  return asText(w.stream, badAcks(w, records), records);
}

/** Acknowledgements found bad, a line each: what was acknowledged, what was read at its seq. */
function asText(stream: string, bad: readonly Acked[], records: readonly ReadRecord[]): string[] {
  if (bad.length === 0) return [];
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  return bad.map((a) => `${stream} seq ${a.seq}: acked ${JSON.stringify(a)}, read ${JSON.stringify(bySeq.get(a.seq) ?? null)}`);
}
