/**
 * Sink topic patterns are matched continuously: a topic created after the sink joined its group
 * is picked up (within `properties.metadata_max_age_ms`) and its records reach the sink.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

describe('sink topic patterns', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a topic created after the sink joined is picked up and delivered', async () => {
    const kafka = new Kafka({ clientId: 'pattern-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      await producer.send({ topic: 'late-a', acks: -1, messages: [{ value: 'a1' }, { value: 'a2' }] });
      const dir = writeRuntimeFiles({
        config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[kafka.properties]\nmetadata_max_age_ms = 300\n[state]\npath = "{dir}/state"\n[connectors]\nconfig_dir = "{dir}/connectors"\n`,
        connectors: { 'late.toml': `type = "sink"\nkey = "late"\npath = "libsvc_connector_file_sink"\n[[topics]]\npattern = "late-"\n[plugin_config]\npath = "{dir}/out.txt"\n` },
      });
      await startRuntime(dir);
      const out = path.join(dir, 'out.txt');
      const lines = (): string[] => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter(Boolean) : []);
      await waitFor(() => lines().length === 2, 'the first topic is delivered');
      // Created now, after the sink joined with late-a only.
      await producer.send({ topic: 'late-b', acks: -1, messages: [{ value: 'b1' }, { value: 'b2' }, { value: 'b3' }] });
      await producer.send({ topic: 'other', acks: -1, messages: [{ value: 'x' }] });
      await waitFor(() => lines().length === 5, 'the new topic is delivered');
      expect(lines().sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
      // Records added to the first topic after the rejoin still come once.
      await producer.send({ topic: 'late-a', acks: -1, messages: [{ value: 'a3' }] });
      await waitFor(() => lines().length === 6, 'later records of the first topic are delivered');
      expect(lines().sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
    } finally {
      await producer.disconnect();
    }
  }, 60_000);
});
