/**
 * Transactions with Kafka's semantics (docs/kafka.md, "Transactions"), driven by librdkafka
 * (Debian's python3-confluent-kafka) and kafkajs: commit and abort, read_committed consumers see
 * exactly the committed records (read_uncommitted ones see all, never the markers), a
 * consume-transform-produce loop commits its input offsets with its output, a newer producer
 * instance fences the older one, a producer killed mid-transaction is aborted after its timeout,
 * and the coordinator's state survives a restart of the node.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { python, startPythonDriver } from './python-process';

const DRIVER = 'confluent_driver.py';

interface Seen {
  committed: string[];
  uncommitted: string[];
}

async function read(broker: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', idle = 2): Promise<Array<string | null>> {
  const r = await python<{ records: Array<{ value: string | null }> }>(DRIVER, { op: 'read', broker, topic, isolation, idle });
  return r.records.map((x) => x.value);
}

async function until(what: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Kafka transactions', () => {
  const dataDir = tempDir();
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ dataDir, args: ['--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('librdkafka: read_committed consumers see exactly the committed transactions, read_uncommitted ones every record and no marker', async () => {
    const seen = await python<Seen>(DRIVER, {
      op: 'txn_produce',
      broker: node.kafka,
      topic: 'tx-basic',
      txnId: 'tx-basic',
      txns: [
        { values: ['a', 'b'], commit: true },
        { values: ['c'], commit: false },
        { values: ['d'], commit: true },
        { values: ['e', 'f'], commit: false },
      ],
    });
    expect(seen.committed).toEqual(['a', 'b', 'd']);
    expect(seen.uncommitted).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // Over HTTP the markers are not records (their offsets are gaps in the seqs), and readers see committed data only (docs/kafka.md).
    const page = (await (await fetch(`${node.url}/tx-basic`)).json()) as Array<{ seq: number; body: string }>;
    expect(page.map((r) => [r.seq, r.body])).toEqual([[0, 'a'], [1, 'b'], [5, 'd']]);
    expect(await (await fetch(`${node.url}/tx-basic?format=raw`)).text()).toBe('abd');
  }, 60_000);

  test('librdkafka: a consume-transform-produce loop commits its output with its input offsets; an aborted step is done again', async () => {
    await python(DRIVER, { op: 'txn_produce', broker: node.kafka, topic: 'tx-in', txnId: 'tx-seed', txns: [{ values: ['a', 'b', 'c', 'd', 'e', 'f'], commit: true }] });
    const r = await python<{ transactions: number; committedOffset: number; output: string[]; outputUncommitted: string[] }>(DRIVER, {
      op: 'ctp',
      broker: node.kafka,
      input: 'tx-in',
      output: 'tx-out',
      group: 'tx-ctp',
      txnId: 'tx-ctp',
      per: 2,
      txns: 3,
      abort: [1],
    });
    expect(r.transactions).toBe(4);
    expect(r.output).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    // The aborted step's records are in the log, dropped by read_committed consumers only.
    expect(r.outputUncommitted).toEqual(['A', 'B', 'C', 'D', 'C', 'D', 'E', 'F']);
    expect(r.committedOffset).toBe(6);
  }, 60_000);

  test('librdkafka: a newer instance of a transactional id fences the older one, whose open transaction is aborted', async () => {
    const r = await python<{ aError: { fatal: boolean; name: string } | null; committed: string[] }>(DRIVER, { op: 'fence', broker: node.kafka, topic: 'tx-fence', txnId: 'tx-fence' });
    expect(r.aError).toEqual({ fatal: true, name: '_FENCED' });
    expect(r.committed).toEqual(['from-b']);
  }, 60_000);

  test('kafkajs: transactions commit and abort; read_committed sees the committed ones', async () => {
    const kafka = new Kafka({ clientId: 'tx-kjs', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ transactionalId: 'tx-kjs', maxInFlightRequests: 1, idempotent: true });
    await producer.connect();
    try {
      const t1 = await producer.transaction();
      await t1.send({ topic: 'tx-kjs', messages: [{ value: 'k1' }, { value: 'k2' }] });
      await t1.commit();
      const t2 = await producer.transaction();
      await t2.send({ topic: 'tx-kjs', messages: [{ value: 'k3' }] });
      await t2.abort();
      const t3 = await producer.transaction();
      await t3.send({ topic: 'tx-kjs', messages: [{ value: 'k4' }] });
      await t3.commit();
    } finally {
      await producer.disconnect();
    }
    expect(await read(node.kafka, 'tx-kjs', 'read_committed')).toEqual(['k1', 'k2', 'k4']);
  }, 60_000);

  test('a producer killed mid-transaction holds read_committed consumers back until its timeout aborts it; a new instance then commits', async () => {
    await python(DRIVER, { op: 'txn_produce', broker: node.kafka, topic: 'tx-kill', txnId: 'tx-kill-seed', txns: [{ values: ['before'], commit: true }] });
    const hung = startPythonDriver(DRIVER, { op: 'hang', broker: node.kafka, topic: 'tx-kill', txnId: 'tx-kill', values: ['lost-1', 'lost-2'], txnTimeoutMs: 8000 });
    await hung.firstLine;
    await hung.kill();
    // Data written after the open transaction waits behind it (the last stable offset) for read_committed consumers.
    const plain = new Kafka({ clientId: 'tx-kill', brokers: [node.kafka], logLevel: logLevel.NOTHING }).producer();
    await plain.connect();
    await plain.send({ topic: 'tx-kill', messages: [{ value: 'after' }] });
    await plain.disconnect();
    expect(await read(node.kafka, 'tx-kill', 'read_committed', 1)).toEqual(['before']);
    expect(node.output()).not.toContain('"txn":"tx-kill","timeoutMs"');
    await until(() => node.output().includes('"txn":"tx-kill","timeoutMs"'), 15_000);
    expect(await read(node.kafka, 'tx-kill', 'read_committed', 1)).toEqual(['before', 'after']);
    expect(await read(node.kafka, 'tx-kill', 'read_uncommitted', 1)).toEqual(['before', 'lost-1', 'lost-2', 'after']);
    const next = await python<Seen>(DRIVER, { op: 'txn_produce', broker: node.kafka, topic: 'tx-kill', txnId: 'tx-kill', txns: [{ values: ['next'], commit: true }] });
    expect(next.committed).toEqual(['before', 'after', 'next']);
  }, 90_000);

  test('the coordinator survives a restart: an open transaction stays invisible, is aborted after its timeout, and the id\'s epoch goes on', async () => {
    const hung = startPythonDriver(DRIVER, { op: 'hang', broker: node.kafka, topic: 'tx-restart', txnId: 'tx-restart', values: ['open-1'], txnTimeoutMs: 5000 });
    await hung.firstLine;
    await hung.kill();
    await node.kill();
    node = await startNode({ dataDir, args: ['--shards', '2', '--shard-workers', '1'] });
    // Committed transactions from before the restart are still committed.
    expect(await read(node.kafka, 'tx-basic', 'read_committed', 1)).toEqual(['a', 'b', 'd']);
    expect(await read(node.kafka, 'tx-restart', 'read_committed', 1)).toEqual([]);
    await until(() => node.output().includes('kafka transaction timed out: aborting'), 15_000);
    const seen = await python<Seen>(DRIVER, { op: 'txn_produce', broker: node.kafka, topic: 'tx-restart', txnId: 'tx-restart', txns: [{ values: ['later'], commit: true }] });
    expect(seen.committed).toEqual(['later']);
    expect(seen.uncommitted).toEqual(['open-1', 'later']);
    // The epoch went on from the stored state: 0 (first), 1 (timeout abort), 2 (this init).
    expect(node.output()).toMatch(/"txn":"tx-restart","producerId":"\d+","epoch":2,"msg":"kafka transactional producer initialized"/);
  }, 90_000);
});
