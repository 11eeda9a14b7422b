/**
 * The consumer group protocol (KIP-848) with a real client: @platformatic/kafka 1.35's consumer
 * with `groupProtocol: 'consumer'` (in a child process: platformatic-driver.mjs), the server-side
 * assignor choosing the partitions: a member joins and another leaves under load, with incremental
 * rebalances (no member loses the partitions it is not asked
 * to give up) and no record lost.
 */
import { consumerProtocolNode } from './consumer-protocol-node';
import { waitFor } from './group-test-helpers';
import { type PltRun, platformatic } from './platformatic-process';

/** Each assignment a member was given, in order (the driver prints every change). */
function assignments(run: PltRun): number[][] {
  return run
    .events()
    .filter((e) => e.type === 'assignment')
    .map((e) => (e.assignments ?? []).flatMap((a) => a.partitions).sort((x, y) => x - y));
}

describe('@platformatic/kafka 1.35 with the consumer group protocol (KIP-848)', () => {
  const k = consumerProtocolNode();

  test('a member joins and another leaves under load: incremental rebalances, members keep what they are not asked to give up, nothing lost', async () => {
    expect(await k.w.createTopic('kip848-load', 6)).toBe(0);
    const start = (): PltRun => platformatic({ op: 'consume', broker: k.node.kafka, group: 'kip848-load', topics: ['kip848-load'], mode: 'earliest', groupProtocol: 'consumer' });
    const [a, b, c] = [start(), start(), start()];
    const runs = [a, b, c];
    const producer = k.kafka.producer();
    let produced = 0;
    let producing = true;
    let loop: Promise<void> = Promise.resolve();
    try {
      await k.stable('kip848-load', 3, 6);
      await producer.connect();
      loop = (async () => {
        while (producing) {
          await producer.send({ topic: 'kip848-load', acks: -1, messages: Array.from({ length: 6 }, (_, j) => ({ partition: j, value: `v${produced + j}` })) });
          produced += 6;
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      await waitFor(() => runs.every((r) => r.messages().length > 0), 'every member consumes', 30_000);

      const d = start();
      runs.push(d);
      await waitFor(() => d.messages().length > 0, 'the new member consumes', 60_000);
      await k.stable('kip848-load', 4, 6);
      await b.stop();
      await k.stable('kip848-load', 3, 6);
      await waitFor(() => a.messages().length > 0 && c.messages().length > 0 && d.messages().length > 0, 'the members consume after the leave', 30_000);
      producing = false;
      await loop;
      const seen = (): Set<string> => new Set(runs.flatMap((r) => r.messages().map((m) => String(m.value))));
      await waitFor(() => seen().size >= produced, `all ${produced} records consumed`, 60_000);
      expect(seen().size).toBe(produced);

      // Incremental: a member's assignment only grows or shrinks, never swapped or emptied wholesale while it stays.
      for (const r of [a, c, d]) {
        const all = assignments(r);
        const steps = all.slice(Math.max(0, all.findIndex((x) => x.length > 0)));
        for (let i = 1; i < steps.length; i++) {
          const [x, y] = [steps[i - 1]!, steps[i]!];
          expect(y.length).toBeGreaterThan(0);
          expect(x.every((p) => y.includes(p)) || y.every((p) => x.includes(p))).toBe(true);
        }
      }
      // When D joined, A and C each kept partitions (6 over 4 members: nobody keeps 3, nobody is left with none).
      const final = new Map((await k.w.cgDescribe(['kip848-load'])).groups[0]!.members.map((m) => [m.memberId, m.assignment.topicPartitions.flatMap((t) => t.partitions)]));
      for (const parts of final.values()) expect(parts.length).toBe(2);
    } catch (err) {
      // Say what each member's process did: whether it exited, what it printed last, its stderr.
      const runState = runs.map((r, i) => `member ${'abcd'[i]}: ${r.state()}\n  last events: ${JSON.stringify(r.events().filter((e) => e.type !== 'message').slice(-3))}\n  stderr: ${r.stderr().slice(-2000)}`);
      const groupLog = k.node.output().split('\n').filter((l) => l.includes('kip848-load')).slice(-30).join('\n');
      throw new Error(`${(err as Error).message}\n${runState.join('\n')}\nnode log (group lines):\n${groupLog}`, { cause: err });
    } finally {
      producing = false;
      await loop.catch(() => undefined);
      await producer.disconnect();
      await Promise.all(runs.map((r) => r.stop()));
    }
  }, 180_000);
});
