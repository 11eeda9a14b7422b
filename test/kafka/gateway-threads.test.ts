/**
 * The Kafka listener with gateway threads (`--gateway-threads`, docs/kafka.md, "Gateway threads"):
 * the main thread hands each accepted connection to the thread serving the fewest, which serves
 * its Produce, Fetch and ListOffsets requests over its own channels to the shard workers and
 * relays everything else to the main thread. Shown with real clients: which thread served a request comes from its trace
 * span (`thread.name`), so the test holds on a loaded machine. The rest of the Kafka suites run
 * with `SVC_GATEWAY_THREADS=2` in .ci/run's gateway-threads pass.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver';
import { sample } from '../helpers/metrics-text';

jest.setTimeout(90_000);

const NO_OTEL_ENV = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', SVC_OTLP_TRACES_ENDPOINT: '', SVC_GATEWAY_THREADS: '' };

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);

describe('Kafka connections on gateway threads', () => {
  let receiver: OtlpReceiver;
  let node: NodeProcess;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    node = await startNode({ args: ['--gateway-threads', '2', '--otlp-traces-endpoint', receiver.url, '--metrics'], env: NO_OTEL_ENV });
  });
  afterAll(async () => {
    await node?.stop();
    await receiver?.close();
  });

  test('two producers are served by the two threads, each Produce on its own thread; a consumer\'s Fetch on its thread and its group APIs on the main thread; every record once, in order', async () => {
    const kafka = (id: string): Kafka => new Kafka({ clientId: id, brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
    const admin = kafka('gw-admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'gw', numPartitions: 2 }] });
    await admin.disconnect();
    // Two producers: two connections, which the listener hands to different threads (fewest first).
    const producers = [kafka('gw-p1').producer(), kafka('gw-p2').producer()];
    await Promise.all(producers.map((p) => p.connect()));
    const sent: string[][] = [[], []];
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        producers.map(async (p, k) => {
          const values = Array.from({ length: 5 }, (_, i) => `p${k}-${round}-${i}`);
          sent[k]!.push(...values);
          await p.send({ topic: 'gw', acks: -1, messages: values.map((value) => ({ value, partition: k })) });
        }),
      );
    }
    const metrics = await (await fetch(`${node.adminUrl}/metrics`)).text();
    expect(sample(metrics, 'svc_kafka_connections')).toBeGreaterThanOrEqual(2);
    await Promise.all(producers.map((p) => p.disconnect()));

    const consumer = kafka('gw-c').consumer({ groupId: 'gw-group', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'gw', fromBeginning: true });
    const got: string[][] = [[], []];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          got[partition]!.push(String(message.value));
          if (got[0]!.length + got[1]!.length === 200) resolve();
        },
      });
    });
    await consumer.disconnect();
    expect(got).toEqual(sent);

    await receiver.waitFor((s) => named(s, 'kafka Produce').filter((x) => x.attributes['svc.records'] === 5).length === 40 && named(s, 'kafka Fetch').length > 0);
    const produces = named(receiver.spans, 'kafka Produce').filter((x) => x.attributes['svc.records'] === 5);
    // Served on the gateway threads, both of them. A Produce that reached a thread before its topic
    // index had the topic (created a moment ago on the main thread) is relayed there, untagged.
    const served = produces.filter((p) => p.attributes['thread.name'] !== undefined);
    if (!node.output().includes('"engine":"uws"')) {
      // A runtime uWS does not load on (Node 24: the node engine) has no gateway threads: the main thread serves everything.
      expect(served).toHaveLength(0);
      return;
    }
    expect(served.length).toBeGreaterThanOrEqual(produces.length / 2);
    const threads = new Set(served.map((p) => String(p.attributes['thread.name'])));
    expect([...threads].every((t) => /^svc-gw-\d+$/.test(t))).toBe(true);
    expect(threads.size).toBe(2);
    expect(new Set(produces.map((p) => String(p.attributes['messaging.client.id'])))).toEqual(new Set(['gw-p1', 'gw-p2']));
    // Every Produce's append is a hop of its thread's own span.
    for (const p of produces) expect(receiver.spans.some((s) => s.name === 'shard append' && s.parentSpanId === p.spanId && s.traceId === p.traceId)).toBe(true);
    // The consumer's Fetch requests are served on its connection's thread too (its group APIs are relayed to the main thread).
    const fetches = named(receiver.spans, 'kafka Fetch').filter((f) => f.attributes['messaging.client.id'] === 'gw-c');
    expect(fetches.length).toBeGreaterThan(0);
    expect(new Set(fetches.map((f) => String(f.attributes['thread.name']))).size).toBe(1);
    expect(fetches.every((f) => /^svc-gw-\d+$/.test(String(f.attributes['thread.name'])))).toBe(true);
    expect(fetches.some((f) => receiver.spans.some((x) => x.name === 'shard read' && x.parentSpanId === f.spanId))).toBe(true);

    // The node's request counts add the threads' Produce requests to the main thread's.
    const after = await (await fetch(`${node.adminUrl}/metrics`)).text();
    expect(sample(after, 'svc_kafka_requests_total', 'api="Produce"')).toBeGreaterThanOrEqual(40);
    expect(sample(after, 'svc_kafka_requests_total', 'api="JoinGroup"')).toBeGreaterThanOrEqual(1);
  });

  test('a transactional producer on a thread: its Produce is relayed to the coordinator; committed records are read, aborted ones are not', async () => {
    const kafka = new Kafka({ clientId: 'gw-txn', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'gw-txn' }] });
    await admin.disconnect();
    const producer = kafka.producer({ transactionalId: 'gw-txn-1', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const aborted = await producer.transaction();
    await aborted.send({ topic: 'gw-txn', messages: [{ value: 'aborted' }] });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({ topic: 'gw-txn', messages: [{ value: 'one' }, { value: 'two' }] });
    await committed.commit();
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'gw-txn-group', maxWaitTimeInMs: 100, readUncommitted: false });
    await consumer.connect();
    await consumer.subscribe({ topic: 'gw-txn', fromBeginning: true });
    const got: string[] = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          got.push(String(message.value));
          if (got.length === 2) resolve();
        },
      });
    });
    await consumer.disconnect();
    expect(got).toEqual(['one', 'two']);
  });

  test('a stop with Kafka connections open on the threads drains them and exits 0', async () => {
    const kafka = new Kafka({ clientId: 'gw-stop', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'gw', acks: -1, messages: [{ value: 'last', partition: 0 }] });
    expect(await node.stop()).toBe(0);
    expect(node.output()).not.toMatch(/"level":"(error|fatal)"/);
    await producer.disconnect().catch(() => undefined);
  });
});
