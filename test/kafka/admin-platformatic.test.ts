/** The admin APIs through @platformatic/kafka 1.35's Admin client (run in a child process: it is an ES module). */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { platformaticAdmin } from './platformatic-process';

describe('admin APIs with @platformatic/kafka', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('creates a topic with retention.ms, describes and incrementally alters it, adds a partition and deletes records', async () => {
    const v = await platformaticAdmin<{
      before: Record<string, string>;
      after: Record<string, string>;
      deleted: Array<{ name: string; partitions: Array<{ partition: number; lowWatermark: string }> }>;
    }>({ broker: node.kafka, action: 'apis', topic: 'plt-admin' });
    expect(v.before).toMatchObject({ 'retention.ms': '120000', 'cleanup.policy': 'delete' });
    expect(v.after).toEqual({ 'retention.ms': '240000' });
    expect(v.deleted).toEqual([{ name: 'plt-admin', partitions: [{ partition: 0, lowWatermark: '0' }] }]);
    const cfg = (await (await fetch(`${node.url}/_streams/plt-admin`)).json()) as { ttlSeconds: number };
    expect(cfg.ttlSeconds).toBe(240);
    expect((await fetch(`${node.url}/plt-admin/1`, { method: 'HEAD' })).status).toBe(200);
  }, 60_000);
});
