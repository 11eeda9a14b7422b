/**
 * The node of a KIP-848 suite with a real client (consumer-protocol-platformatic*.test.ts): started
 * in beforeAll with a short consumer-group heartbeat, stopped in afterAll, with a raw-protocol
 * connection to watch the group and a kafkajs client for classic groups and producers.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from './group-wire-client';
import { waitFor } from './group-test-helpers';

const NODE_ARGS = ['--no-admin', '--shards', '2', '--shard-workers', '1', '--kafka-group-consumer-heartbeat-interval-ms', '300'];

export interface ConsumerProtocolNode {
  readonly node: NodeProcess;
  readonly w: GroupWire;
  readonly kafka: Kafka;
  /** The group is Stable with `n` members whose assignments cover `partitions` partitions. */
  stable(group: string, n: number, partitions: number): Promise<void>;
}

/** Register the suite's hooks; the value is usable inside tests. */
export function consumerProtocolNode(): ConsumerProtocolNode {
  let node: NodeProcess | undefined;
  let w: GroupWire | undefined;
  let kafka: Kafka | undefined;
  beforeAll(async () => {
    node = await startNode({ args: NODE_ARGS });
    w = await GroupWire.connect(node.kafka);
    kafka = new Kafka({ clientId: 'svc-kip848', brokers: [node.kafka], logLevel: logLevel.NOTHING });
  });
  afterAll(async () => {
    w?.close();
    await node?.stop();
  });
  return {
    get node() {
      return node!;
    },
    get w() {
      return w!;
    },
    get kafka() {
      return kafka!;
    },
    async stable(group, n, partitions) {
      await waitFor(async () => {
        const d = (await w!.cgDescribe([group])).groups[0]!;
        const held = d.members.flatMap((m) => m.assignment.topicPartitions.flatMap((t) => t.partitions));
        return d.groupState === 'Stable' && d.members.length === n && held.length === partitions && new Set(held).size === partitions;
      }, `group ${group} stable with ${n} members`, 60_000).catch(async (err: Error) => {
        // Say where the group stood: each member's epoch, assignment and target.
        const d = (await w!.cgDescribe([group])).groups[0]!;
        throw new Error(`${err.message}\n${JSON.stringify(d, null, 1)}`);
      });
    },
  };
}
