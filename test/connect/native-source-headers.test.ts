/**
 * Record headers from a native source, against a real node: the counter fixture built with
 * -DWITH_HEADERS gives none, one or two headers per record through the SDK's svc_source_add_h;
 * they arrive as Kafka record headers, in the plugin's host process and in process, through
 * batches larger than the host's first poll buffer (the SDK asks for more room and the batch is
 * written again).
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { buildCounterSource } from './helpers/native-fixtures';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const COUNT = 30000;

/** The headers the fixture gives record n (besides the runtime's svc-source). */
const expected = (n: number): Record<string, string> => (n % 3 === 0 ? {} : n % 3 === 1 ? { n: String(n) } : { n: String(n), kind: 'two' });

describe('native source headers', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test.each(['process', 'in_process'])('headers given by svc_source_add_h arrive as Kafka headers (isolation %s)', async (isolation) => {
    const so = buildCounterSource(COUNT, undefined, true);
    const topic = `native-src-headers-${isolation}`;
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
      // 10,000 records with their headers are about 400 KiB: more than the first 256 KiB buffer.
      connectors: { 'count.toml': `type = "source"\nkey = "hcount"\npath = "${so}"\nisolation = "${isolation}"\n[[topics]]\nname = "${topic}"\n[batch]\nmax_records = 10000\n` },
    });
    const rt = await startRuntime(dir);
    const kafka = new Kafka({ clientId: `hdr-${isolation}`, brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `hdr-reader-${isolation}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const got: { n: number; headers: Record<string, string> }[] = [];
    await consumer.run({
      eachMessage: async ({ message }) =>
        void got.push({ n: (JSON.parse(message.value!.toString()) as { n: number }).n, headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])) }),
    });
    await waitFor(() => got.length >= COUNT, `${COUNT} records`, 60000);
    await consumer.disconnect();
    expect(got.map((g) => g.n)).toEqual(Array.from({ length: COUNT }, (_, n) => n));
    for (const g of got) {
      const { 'svc-source': src, ...rest } = g.headers;
      expect(src).toBe(`hcount@${g.n}`);
      if (JSON.stringify(rest) !== JSON.stringify(expected(g.n))) expect({ n: g.n, headers: rest }).toEqual({ n: g.n, headers: expected(g.n) });
    }
    await rt.stop();
  }, 120_000);
});
