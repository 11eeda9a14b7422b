/**
 * HTTP (Svc) and Durable Streams readers see only committed data of Kafka transactional producers
 * (docs/kafka.md, "Transactions"), driven by a real transactional producer (kafkajs): records of an
 * open transaction are not served until it commits, and neither are plain records after its first
 * one; an aborted transaction's records are never served; a long-poll and an SSE reader waiting at
 * the last stable offset receive the records when the commit lands; the bound survives a crash of
 * the node while a transaction is open.
 */
import { Kafka, type Producer, logLevel } from 'kafkajs';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

interface JsonRecord {
  seq: number;
  body: string;
}

describe('Kafka transactions and HTTP / Durable Streams readers', () => {
  const dataDir = tempDir();
  let node: NodeProcess;
  const producers: Producer[] = [];
  const args = ['--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0'];

  beforeAll(async () => {
    node = await startNode({ dataDir, args });
  });
  afterAll(async () => {
    for (const p of producers) await p.disconnect().catch(() => undefined);
    await node.stop();
  });

  const kafka = (id: string): Kafka => new Kafka({ clientId: id, brokers: [node.kafka], logLevel: logLevel.NOTHING });
  async function txnProducer(id: string, transactionTimeout = 60_000): Promise<Producer> {
    const p = kafka(id).producer({ transactionalId: id, maxInFlightRequests: 1, idempotent: true, transactionTimeout });
    await p.connect();
    producers.push(p);
    return p;
  }
  async function plain(topic: string, values: string[]): Promise<void> {
    const p = kafka(`${topic}-plain`).producer();
    await p.connect();
    await p.send({ topic, messages: values.map((value) => ({ value })) });
    await p.disconnect();
  }
  /** Svc catch-up read: the records' seqs and bodies, and Svc-Next-Seq. */
  async function svc(topic: string, seq = 0): Promise<{ records: Array<[number, string]>; next: number; raw: string }> {
    const r = await fetch(`${node.url}/${topic}?seq=${seq}`);
    expect(r.status).toBe(200);
    const records = ((await r.json()) as JsonRecord[]).map((x): [number, string] => [x.seq, x.body]);
    const raw = await (await fetch(`${node.url}/${topic}?seq=${seq}&format=raw`)).text();
    return { records, next: Number(r.headers.get('svc-next-seq')), raw };
  }
  /** Durable Streams catch-up read from `offset`: the bytes and Stream-Next-Offset. */
  async function ds(topic: string, offset = '-1'): Promise<{ body: string; next: string }> {
    const r = await fetch(`${node.dsUrl!}/v1/stream/${topic}?offset=${offset}`);
    expect(r.status).toBe(200);
    return { body: await r.text(), next: r.headers.get('stream-next-offset')! };
  }

  test('commit: records of an open transaction, and plain records after its first one, are served only once it commits', async () => {
    const topic = 'txr-commit';
    await plain(topic, ['p0']);
    const p = await txnProducer('txr-commit');
    const t = await p.transaction();
    await t.send({ topic, messages: [{ value: 'c1' }, { value: 'c2' }] });
    await plain(topic, ['p1']);
    // Open: only what is before the transaction's first record (the last stable offset, 1).
    const open = await svc(topic);
    expect(open.records).toEqual([[0, 'p0']]);
    expect(open.raw).toBe('p0');
    expect(open.next).toBe(1);
    const openDs = await ds(topic);
    expect(openDs.body).toBe('p0');
    const head = await fetch(`${node.dsUrl!}/v1/stream/${topic}`, { method: 'HEAD' });
    expect(head.headers.get('stream-next-offset')).toBe(openDs.next);
    // Reading on from the position given stops there too: nothing is skipped.
    expect((await svc(topic, open.next)).records).toEqual([]);
    expect((await ds(topic, openDs.next)).body).toBe('');

    await t.commit();
    const done = await svc(topic);
    // p0 (0), c1 c2 (1, 2), p1 (3), the commit marker (4) is not a record.
    expect(done.records).toEqual([[0, 'p0'], [1, 'c1'], [2, 'c2'], [3, 'p1']]);
    expect(done.raw).toBe('p0c1c2p1');
    expect(done.next).toBe(5);
    expect((await svc(topic, open.next)).records).toEqual([[1, 'c1'], [2, 'c2'], [3, 'p1']]);
    expect((await ds(topic)).body).toBe('p0c1c2p1');
    expect((await ds(topic, openDs.next)).body).toBe('c1c2p1');
  }, 60_000);

  test('abort: records of an aborted transaction are never served, in any format', async () => {
    const topic = 'txr-abort';
    const p = await txnProducer('txr-abort');
    const t1 = await p.transaction();
    await t1.send({ topic, messages: [{ value: 'a1' }, { value: 'a2' }] });
    await t1.abort();
    await plain(topic, ['p0']);
    const t2 = await p.transaction();
    await t2.send({ topic, messages: [{ value: 'k1' }] });
    await t2.commit();
    const r = await svc(topic);
    // a1 a2 (0, 1), abort marker (2), p0 (3), k1 (4), commit marker (5).
    expect(r.records).toEqual([[3, 'p0'], [4, 'k1']]);
    expect(r.raw).toBe('p0k1');
    expect(r.next).toBe(6);
    expect((await svc(topic, 1)).records).toEqual([[3, 'p0'], [4, 'k1']]);
    expect((await ds(topic)).body).toBe('p0k1');
    const sse = await (await fetch(`${node.url}/${topic}?live=sse`, { signal: AbortSignal.timeout(1500) }).then((res) => readSse(res, 1000))).join('');
    expect(sse).toContain('"body":"p0"');
    expect(sse).not.toContain('"body":"a1"');
  }, 60_000);

  test('open: a long-poll and an SSE reader at the last stable offset receive the records when the commit lands', async () => {
    const topic = 'txr-live';
    await plain(topic, ['p0']);
    const p = await txnProducer('txr-live');
    const t = await p.transaction();
    await t.send({ topic, messages: [{ value: 'l1' }, { value: 'l2' }] });
    await plain(topic, ['after']);
    let svcAnswered = false;
    let dsAnswered = false;
    const svcPoll = fetch(`${node.url}/${topic}?seq=1&live=long-poll`).then(async (r) => {
      svcAnswered = true;
      return { status: r.status, records: ((await r.json()) as JsonRecord[]).map((x) => x.body) };
    });
    const dsPoll = fetch(`${node.dsUrl!}/v1/stream/${topic}?offset=${(await ds(topic)).next}&live=long-poll`).then(async (r) => {
      dsAnswered = true;
      return { status: r.status, body: await r.text() };
    });
    const sse = fetch(`${node.url}/${topic}?seq=1&live=sse`, { signal: AbortSignal.timeout(8000) }).then((res) => readSse(res, 6000, (text) => text.includes('"body":"after"')));
    // Durable Streams SSE from the start: p0, then at the last stable offset until the commit (bytes as base64).
    const all = Buffer.from('p0l1l2after').toString('base64');
    const dsSse = fetch(`${node.dsUrl!}/v1/stream/${topic}?offset=-1&live=sse`, { signal: AbortSignal.timeout(8000) }).then((res) => readSse(res, 6000, (text) => decodeDsSse(text) === all));
    // Tail events from the transaction's own appends and the plain one after it do not wake them.
    await new Promise((r) => setTimeout(r, 1500));
    expect(svcAnswered).toBe(false);
    expect(dsAnswered).toBe(false);
    await t.commit();
    const s = await svcPoll;
    expect(s.status).toBe(200);
    expect(s.records).toEqual(['l1', 'l2', 'after']);
    const d = await dsPoll;
    expect(d.status).toBe(200);
    expect(d.body).toBe('l1l2after');
    const dsEvents = (await dsSse).join('');
    expect(Buffer.from(decodeDsSse(dsEvents), 'base64').toString()).toBe('p0l1l2after');
    // Its first control event stood at the last stable offset (1), not at the tail.
    expect(dsEvents).toContain('"streamNextOffset":"0000000000000000_0000000000000001"');
    const events = (await sse).join('');
    expect(events.indexOf('"body":"l1"')).toBeGreaterThan(-1);
    expect(events.indexOf('"body":"l1"')).toBeLessThan(events.indexOf('"body":"after"'));
  }, 60_000);

  test('a long-poll woken by an abort moves past the aborted records without serving them', async () => {
    const topic = 'txr-live-abort';
    await plain(topic, ['p0']);
    const p = await txnProducer('txr-live-abort');
    const t = await p.transaction();
    await t.send({ topic, messages: [{ value: 'gone' }] });
    const poll = fetch(`${node.url}/${topic}?seq=1&live=long-poll`);
    await new Promise((r) => setTimeout(r, 500));
    await t.abort();
    const r = await poll;
    // Nothing to show: 204 at the position past the aborted record and its marker.
    expect(r.status).toBe(204);
    expect(r.headers.get('svc-next-seq')).toBe('3');
    await plain(topic, ['p1']);
    expect((await svc(topic)).records).toEqual([[0, 'p0'], [3, 'p1']]);
  }, 60_000);

  test('a crash while a transaction is open: after the restart its records stay hidden, and its timeout abort never shows them', async () => {
    const topic = 'txr-crash';
    await plain(topic, ['p0']);
    // A timeout longer than a restart takes on a loaded machine (10-14 s at load 20): the first reads must see the transaction still open.
    const p = await txnProducer('txr-crash', 20_000);
    const t = await p.transaction();
    await t.send({ topic, messages: [{ value: 'x1' }] });
    await plain(topic, ['p1']);
    await node.kill();
    node = await startNode({ dataDir, args });
    const r = await svc(topic);
    expect(r.records).toEqual([[0, 'p0']]);
    expect(r.next).toBe(1);
    expect((await ds(topic)).body).toBe('p0');
    // The transaction times out (20 s) and is aborted: p1 is served, x1 never.
    const end = Date.now() + 45_000;
    while ((await svc(topic)).records.length < 2 && Date.now() < end) await new Promise((res) => setTimeout(res, 250));
    const after = await svc(topic);
    expect(after.records).toEqual([[0, 'p0'], [2, 'p1']]);
    expect(after.raw).toBe('p0p1');
    expect((await ds(topic)).body).toBe('p0p1');
  }, 120_000);
});

/** The text of an SSE response until `stopWhen` holds or `ms` pass. */
async function readSse(res: Response, ms: number, stopWhen: (text: string) => boolean = () => false): Promise<string[]> {
  const out: string[] = [];
  const reader = res.body!.getReader();
  const end = Date.now() + ms;
  const dec = new TextDecoder();
  try {
    while (Date.now() < end) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, end - Date.now())))]);
      if (chunk === null || chunk.done) break;
      out.push(dec.decode(chunk.value));
      if (stopWhen(out.join(''))) break;
    }
  } catch {
    // Timed out (the signal): what came is what we have.
  }
  await reader.cancel().catch(() => undefined);
  return out;
}

/** The base64 data of Durable Streams SSE `data` events, decoded and re-joined (one event per page). */
function decodeDsSse(text: string): string {
  const bytes: Buffer[] = [];
  for (const m of text.matchAll(/event: data\n((?:data:.*\n)+)/g)) bytes.push(Buffer.from(m[1]!.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join(''), 'base64'));
  return Buffer.concat(bytes).toString('base64');
}
