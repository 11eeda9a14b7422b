/**
 * OpenTelemetry traces (docs/metrics.md, "Traces") from a real node to a real OTLP/HTTP receiver
 * (test/helpers/otlp-receiver.ts decodes the JSON the exporter sends): an append and a read through
 * the Svc, Durable Streams and Kafka listeners give request spans with their attributes and a child
 * span for the shard hop, under the caller's W3C traceparent; traces are off unless asked for; a
 * collector that is down neither fails nor slows requests, and is logged once, not per export.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { freePort } from '../../helpers/free-ports';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../helpers/otlp-receiver';

jest.setTimeout(60_000);

/** No OpenTelemetry variables from the environment the tests run in. */
const NO_OTEL_ENV = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', SVC_OTLP_TRACES_ENDPOINT: '' };

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = (traceId: string, spanId: string): string => `00-${traceId}-${spanId}-01`;

const named = (spans: ReceivedSpan[], name: string, traceId?: string): ReceivedSpan[] => spans.filter((s) => s.name === name && (traceId === undefined || s.traceId === traceId));
const childOf = (spans: ReceivedSpan[], parent: ReceivedSpan, name: string): ReceivedSpan | undefined =>
  spans.find((s) => s.name === name && s.traceId === parent.traceId && s.parentSpanId === parent.spanId);

describe('traces on (--otlp-traces-endpoint)', () => {
  let receiver: OtlpReceiver;
  let node: NodeProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    node = await startNode({ args: ['--otlp-traces-endpoint', receiver.url, '--otlp-service-name', 'svc-under-test', '--ds-listen', '127.0.0.1:0'], env: NO_OTEL_ENV });
  });

  test('an Svc append under a traceparent: a server span, child of the caller, with a shard append span below it', async () => {
    expect((await fetch(`${node.url}/t/a`, { method: 'PUT' })).status).toBe(201);
    const body = JSON.stringify({ records: [{ body: 'one' }, { body: 'two' }, { body: 'three' }] });
    const r = await fetch(`${node.url}/t/a`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json', traceparent: traceparent(TRACE_ID, CALLER_SPAN) }, body });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    await receiver.waitFor((s) => named(s, 'svc append', TRACE_ID).length === 1 && named(s, 'shard append', TRACE_ID).length === 1);

    const append = named(receiver.spans, 'svc append', TRACE_ID)[0]!;
    expect(append.parentSpanId).toBe(CALLER_SPAN);
    expect(append.kind).toBe(2); // SERVER
    expect(append.status).toBe(0);
    expect(append.resource['service.name']).toBe('svc-under-test');
    expect(append.attributes).toMatchObject({
      'svc.listener': 'svc',
      'http.request.method': 'POST',
      'url.path': '/t/a',
      'http.request.body.size': Buffer.byteLength(body),
      'http.response.status_code': 200,
      'svc.stream': '/t/a',
      'svc.records': 3,
    });
    expect(append.attributes['svc.bytes']).toBeGreaterThan(0);
    const hop = childOf(receiver.spans, append, 'shard append')!;
    expect(hop).toBeDefined();
    expect(hop.kind).toBe(1); // INTERNAL
    expect(hop.attributes).toMatchObject({ 'svc.stream': '/t/a', 'svc.records': 3, 'svc.bytes': append.attributes['svc.bytes'] });
    expect(typeof hop.attributes['svc.shard']).toBe('number');
    // The hop (worker, group commit, fdatasync) lies inside its request.
    expect(hop.startNs).toBeGreaterThanOrEqual(append.startNs);
    expect(hop.endNs - hop.startNs).toBeLessThanOrEqual(append.endNs - append.startNs + 1_000_000n);
  });

  test('an Svc read without a traceparent starts a trace: a server span with a shard read span below it', async () => {
    const r = await fetch(`${node.url}/t/a?seq=0`);
    expect(r.status).toBe(200);
    expect((await r.json()) as unknown[]).toHaveLength(3);
    await receiver.waitFor((s) => named(s, 'svc read').some((x) => childOf(s, x, 'shard read') !== undefined));
    const read = named(receiver.spans, 'svc read').find((x) => childOf(receiver.spans, x, 'shard read') !== undefined)!;
    expect(read.parentSpanId).toBeNull();
    expect(read.traceId).not.toBe(TRACE_ID);
    expect(read.attributes).toMatchObject({ 'svc.listener': 'svc', 'http.request.method': 'GET', 'http.response.status_code': 200, 'svc.stream': '/t/a', 'svc.records': 3 });
    expect(childOf(receiver.spans, read, 'shard read')!.attributes).toMatchObject({ 'svc.stream': '/t/a', 'svc.records': 3 });
  });

  test('an error reply: the span carries the status and the Svc-Request-Id the client got', async () => {
    const traceId = 'a'.repeat(32);
    const r = await fetch(`${node.url}/t/missing?seq=0`, { headers: { traceparent: traceparent(traceId, 'b'.repeat(16)) } });
    expect(r.status).toBe(404);
    const id = r.headers.get('svc-request-id');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    await receiver.waitFor((s) => named(s, 'svc read', traceId).length === 1);
    const span = named(receiver.spans, 'svc read', traceId)[0]!;
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 404, 'svc.request_id': id });
    // A 4xx is the client's: the server span is not in error (OpenTelemetry HTTP conventions).
    expect(span.status).toBe(0);
    // The shard said not_found: the hop span is the one in error, with the code.
    const hop = childOf(receiver.spans, span, 'shard read');
    expect(hop?.attributes['error.type']).toBe('not_found');
    expect(hop?.status).toBe(2);
  });

  test('Durable Streams append and read: ds spans with their shard hops, under the caller\'s trace', async () => {
    const base = `${node.dsUrl!}/v1/stream`;
    expect((await fetch(`${base}/dt`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const traceId = 'c'.repeat(32);
    const a = await fetch(`${base}/dt`, { method: 'POST', headers: { 'content-type': 'text/plain', traceparent: traceparent(traceId, 'd'.repeat(16)) }, body: 'hello' });
    expect(a.status).toBeLessThan(300);
    const r = await fetch(`${base}/dt?offset=-1`, { headers: { traceparent: traceparent(traceId, 'e'.repeat(16)) } });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('hello');
    await receiver.waitFor((s) => named(s, 'ds append', traceId).length === 1 && named(s, 'ds read', traceId).length === 1 && named(s, 'shard read', traceId).length >= 1);
    const append = named(receiver.spans, 'ds append', traceId)[0]!;
    expect(append.parentSpanId).toBe('d'.repeat(16));
    expect(append.attributes).toMatchObject({ 'svc.listener': 'ds', 'svc.stream': '/dt', 'svc.records': 1 });
    expect(childOf(receiver.spans, append, 'shard append')?.attributes['svc.records']).toBe(1);
    const read = named(receiver.spans, 'ds read', traceId)[0]!;
    expect(read.parentSpanId).toBe('e'.repeat(16));
    expect(read.attributes).toMatchObject({ 'svc.listener': 'ds', 'http.response.status_code': 200, 'svc.records': 1 });
    expect(childOf(receiver.spans, read, 'shard read')).toBeDefined();
  });

  test('Kafka Produce and Fetch from a real client: kafka spans with shard append and read hops', async () => {
    const kafka = new Kafka({ clientId: 'trace-test', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'traced' }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'traced', acks: -1, messages: [{ value: 'k0' }, { value: 'k1' }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'trace-test-group', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'traced', fromBeginning: true });
    let got = 0;
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async () => {
          if (++got === 2) resolve();
        },
      });
    });
    await consumer.disconnect();

    await receiver.waitFor((s) => named(s, 'kafka Produce').length >= 1 && named(s, 'kafka Fetch').some((f) => (f.attributes['svc.records'] ?? 0) === 2));
    const produce = named(receiver.spans, 'kafka Produce')[0]!;
    expect(produce.kind).toBe(2);
    expect(produce.attributes).toMatchObject({ 'svc.listener': 'kafka', 'messaging.system': 'kafka', 'messaging.client.id': 'trace-test', 'svc.kafka.error_code': 0, 'svc.records': 2 });
    expect(childOf(receiver.spans, produce, 'shard append')?.attributes['svc.records']).toBe(2);
    const fetchSpan = named(receiver.spans, 'kafka Fetch').find((f) => f.attributes['svc.records'] === 2)!;
    expect(childOf(receiver.spans, fetchSpan, 'shard read')).toBeDefined();
  });
});

describe('traces with gateway threads (--gateway-threads 2)', () => {
  test('each thread traces the requests it serves, with its shard hops and its thread.name; what it leaves to the main thread is traced there; spans queued at a stop are sent', async () => {
    const receiver = await startOtlpReceiver();
    const node = await startNode({ args: ['--otlp-traces-endpoint', receiver.url, '--gateway-threads', '2'], env: { ...NO_OTEL_ENV, SVC_GATEWAY_THREADS: '' } });
    // Several connections: the kernel spreads them over the threads' sockets (SO_REUSEPORT).
    const streams = ['/g/a', '/g/b', '/g/c', '/g/d'];
    for (const st of streams) expect((await fetch(`${node.url}${st}`, { method: 'PUT' })).status).toBe(201);
    const traceId = 'f'.repeat(32);
    const a = await fetch(`${node.url}/g/a`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', traceparent: traceparent(traceId, '1'.repeat(16)) }, body: 'one' });
    expect(a.status).toBe(200);
    const r = await fetch(`${node.url}/g/a?seq=0`, { headers: { traceparent: traceparent(traceId, '2'.repeat(16)) } });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    await receiver.waitFor((s) => named(s, 'svc append', traceId).length === 1 && named(s, 'svc read', traceId).length === 1 && named(s, 'shard read', traceId).length === 1);
    const append = named(receiver.spans, 'svc append', traceId)[0]!;
    expect(append.parentSpanId).toBe('1'.repeat(16));
    expect(append.attributes).toMatchObject({ 'svc.listener': 'svc', 'svc.stream': '/g/a', 'svc.records': 1, 'http.response.status_code': 200 });
    expect(String(append.attributes['thread.name'])).toMatch(/^svc-gw-\d+$/);
    expect(childOf(receiver.spans, append, 'shard append')?.attributes['svc.records']).toBe(1);
    const read = named(receiver.spans, 'svc read', traceId)[0]!;
    expect(String(read.attributes['thread.name'])).toMatch(/^svc-gw-\d+$/);
    expect(childOf(receiver.spans, read, 'shard read')?.attributes['svc.records']).toBe(1);
    // The list is the main thread's: its span, once, without a thread name.
    const listTrace = '5'.repeat(32);
    expect((await fetch(`${node.url}/`, { headers: { traceparent: traceparent(listTrace, '6'.repeat(16)) } })).status).toBe(200);
    await receiver.waitFor((s) => named(s, 'svc read', listTrace).length === 1);
    const list = named(receiver.spans, 'svc read', listTrace)[0]!;
    expect(list.attributes['url.path']).toBe('/');
    expect(list.attributes['thread.name']).toBeUndefined();
    // Both threads export: appends over many connections reach each of them.
    const late = '7'.repeat(32);
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const res = await fetch(`${node.url}${streams[i % streams.length]!}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', traceparent: traceparent(late, (i + 16).toString(16).padStart(16, '0')), connection: 'close' }, body: `x${i}` });
        expect(res.status).toBe(200);
      }),
    );
    // Stopped at once: the spans still queued in each thread go out with the drain (not after the 1 s export interval).
    expect(await node.stop()).toBe(0);
    await receiver.waitFor((s) => named(s, 'svc append', late).length === 16, 5000);
    const threads = new Set(named(receiver.spans, 'svc append', late).map((x) => x.attributes['thread.name']));
    expect([...threads].every((t) => /^svc-gw-\d+$/.test(String(t)))).toBe(true);
    expect(threads.size).toBe(2);
    expect(named(receiver.spans, 'shard append', late)).toHaveLength(16);
    expect(node.output().split('\n').filter((l) => l.includes('OpenTelemetry traces on')).length).toBe(3);
  });
});

describe('sampling', () => {
  test('ratio 0 keeps no new trace but follows a sampled caller; an unsampled caller is not traced either', async () => {
    const receiver = await startOtlpReceiver();
    const zero = await startNode({ args: ['--otlp-traces-endpoint', receiver.url, '--otlp-traces-sample-ratio', '0'], env: NO_OTEL_ENV });
    expect((await fetch(`${zero.url}/s/a`, { method: 'PUT' })).status).toBe(201);
    for (let i = 0; i < 10; i++) expect((await fetch(`${zero.url}/s/a`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'x' })).status).toBe(200);
    const kept = '1'.repeat(32);
    const dropped = '2'.repeat(32);
    expect((await fetch(`${zero.url}/s/a`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', traceparent: traceparent(kept, '3'.repeat(16)) }, body: 'y' })).status).toBe(200);
    expect((await fetch(`${zero.url}/s/a`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', traceparent: `00-${dropped}-${'4'.repeat(16)}-00` }, body: 'z' })).status).toBe(200);
    await receiver.waitFor((s) => named(s, 'shard append', kept).length === 1);
    await new Promise((r) => setTimeout(r, 1500)); // one more export interval: nothing else comes
    expect(new Set(receiver.spans.map((x) => x.traceId))).toEqual(new Set([kept]));
    expect(receiver.spans.map((x) => x.name).sort()).toEqual(['shard append', 'svc append']);
  });
});

describe('traces off', () => {
  test('by default no span is sent, even with a collector listening; the standard OTEL_EXPORTER_OTLP_ENDPOINT turns them on', async () => {
    const receiver = await startOtlpReceiver();
    const off = await startNode({ env: NO_OTEL_ENV });
    expect((await fetch(`${off.url}/o/a`, { method: 'PUT' })).status).toBe(201);
    for (let i = 0; i < 20; i++) expect((await fetch(`${off.url}/o/a`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: `r${i}` })).status).toBe(200);
    expect((await fetch(`${off.url}/o/a?seq=0`)).status).toBe(200);
    // The exporter sends every second: 2.5 s would have seen a batch.
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.requests).toBe(0);
    expect(off.output()).not.toContain('OpenTelemetry traces on');
    await off.stop();

    // The same node with the OpenTelemetry SDK's own variable (the base URL; /v1/traces is added).
    const std = await startNode({ env: { ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base } });
    expect((await fetch(`${std.url}/o/b`, { method: 'PUT' })).status).toBe(201);
    await receiver.waitFor((s) => named(s, 'svc create').length === 1);
    expect(receiver.spans[0]!.resource['service.name']).toBe('svc');
  });
});

/** Appends and reads for `ms`; returns how many pairs ran and the slowest pair (ms). */
async function traffic(node: NodeProcess, stream: string, ms: number): Promise<{ n: number; worst: number }> {
  expect((await fetch(`${node.url}${stream}`, { method: 'PUT' })).status).toBe(201);
  const until = Date.now() + ms;
  let worst = 0;
  let n = 0;
  while (Date.now() < until) {
    const t0 = performance.now();
    const a = await fetch(`${node.url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: `r${n}` });
    const r = await fetch(`${node.url}${stream}?seq=${n}`);
    await r.arrayBuffer();
    worst = Math.max(worst, performance.now() - t0);
    expect(a.status).toBe(200);
    expect(r.status).toBe(200);
    n++;
  }
  return { n, worst };
}

const exportLines = (node: NodeProcess): string[] => node.output().split('\n').filter((l) => l.includes('cannot export traces'));

async function until(pred: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a collector that is down or refuses', () => {
  test('down (connection refused): requests neither fail nor wait for it; the failure is logged, once', async () => {
    const port = await freePort(); // nothing listens here
    const endpoint = `http://127.0.0.1:${port}/v1/traces`;
    const node = await startNode({ args: ['--otlp-traces-endpoint', endpoint], env: NO_OTEL_ENV });
    const { n, worst } = await traffic(node, '/d/a', 3000);
    expect(n).toBeGreaterThan(20);
    // Far below the exporter's 5 s timeout and its retries: no request waited for an export.
    expect(worst).toBeLessThan(1000);
    // The exporter retries with backoff within its 5 s timeout before it gives a batch up.
    await until(() => exportLines(node).length > 0, 15_000);
    expect(exportLines(node)).toHaveLength(1);
    expect(JSON.parse(exportLines(node)[0]!)).toMatchObject({ level: 'warn', endpoint });
    // Shutdown is not held by the spans it cannot send.
    const t0 = Date.now();
    expect(await node.stop()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
  });

  test('refusing every export (400): one log line for many failed exports', async () => {
    const receiver = await startOtlpReceiver({ refuseWith: 400 });
    const node = await startNode({ args: ['--otlp-traces-endpoint', receiver.url], env: NO_OTEL_ENV });
    const { worst } = await traffic(node, '/d/b', 4000);
    expect(worst).toBeLessThan(1000);
    await until(() => receiver.requests >= 3, 5000);
    // Several exports failed (one a second), one line said so.
    const lines = exportLines(node);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).droppedSpans).toBeGreaterThan(0);
  });
});
