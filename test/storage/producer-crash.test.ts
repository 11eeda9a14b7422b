/**
 * Idempotent producers across a SIGKILL: producer state lives in the batch headers and in the
 * stream's catalog entry, so a client that retries its last producer sequence after the node
 * crashed and restarted is acknowledged as a duplicate with the original seqs, and nothing is
 * written twice. Once when the state comes from the checkpointed catalog, once when it needs log
 * replay (checkpoints are batched, CHECKPOINT_EVERY_MS apart: killing right after the acknowledgement beats it).
 */
import { CHECKPOINT_EVERY_MS } from '../../src/shards/worker/checkpointer';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

const ARGS = ['--shard-workers', '1'];
const STREAM = '/producer-crash/s';

interface Ack {
  status: number;
  start: string | null;
  next: string | null;
  timestamp: string | null;
  duplicate: string | null;
  producerEpoch: string | null;
}

async function append(node: NodeProcess, body: string, epoch: number, seq: number): Promise<Ack> {
  const res = await fetch(node.url + STREAM, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'svc-producer-id': 'crash-producer', 'svc-producer-epoch': String(epoch), 'svc-producer-seq': String(seq) },
    body,
  });
  await res.arrayBuffer();
  const h = (n: string): string | null => res.headers.get(n);
  return { status: res.status, start: h('svc-start-seq'), next: h('svc-next-seq'), timestamp: h('svc-timestamp'), duplicate: h('svc-producer-duplicate'), producerEpoch: h('producer-epoch') };
}

async function bodies(node: NodeProcess): Promise<string[]> {
  const res = await fetch(`${node.url}${STREAM}?count=10000`);
  expect(res.status).toBe(200);
  const records = (await res.json()) as Array<{ seq: number; body: string }>;
  records.forEach((r, i) => expect(r.seq).toBe(i));
  return records.map((r) => r.body);
}

/** Frames the restarted node replayed from its log beyond the checkpoint (summed over workers). */
function replayedFrames(node: NodeProcess): number {
  return [...node.output().matchAll(/"replayedFrames":(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0);
}

async function startWithStream(dataDir: string): Promise<NodeProcess> {
  const node = await startNode({ dataDir, args: ARGS });
  expect((await fetch(node.url + STREAM, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  return node;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('an idempotent producer across a SIGKILL', () => {
  test('a retry after a crash that follows a checkpoint is a duplicate with the original seqs, from the stored producer table', async () => {
    const dataDir = tempDir('svc-producer-crash-');
    const node = await startWithStream(dataDir);
    const acks: Ack[] = [];
    for (let i = 0; i < 6; i++) acks.push(await append(node, `r${i}`, 0, i));
    expect(acks.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await sleep(CHECKPOINT_EVERY_MS + 400); // the checkpoint has run: nothing is left to replay
    await node.kill();

    const again = await startNode({ dataDir, args: ARGS });
    expect(replayedFrames(again)).toBe(0);
    const retry = await append(again, 'r5', 0, 5);
    expect(retry).toEqual({ ...acks[5]!, duplicate: 'true' });
    const recent = await append(again, 'r3', 0, 3);
    expect(recent).toEqual({ ...acks[3]!, duplicate: 'true' });
    expect(await bodies(again)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    const next = await append(again, 'r6', 0, 6);
    expect([next.status, next.start, next.duplicate]).toEqual([200, '6', null]);
    expect(await again.stop()).toBe(0);
  });

  test('a retry after a crash that needed log replay is a duplicate with the original seqs, and the epoch still fences', async () => {
    const dataDir = tempDir('svc-producer-crash-');
    const node = await startWithStream(dataDir);
    const acks: Ack[] = [];
    for (let i = 0; i < 3; i++) acks.push(await append(node, `r${i}`, 1, i));
    await sleep(CHECKPOINT_EVERY_MS + 400); // seqs 0..2 reach the checkpointed catalog
    for (let i = 3; i < 6; i++) acks.push(await append(node, `r${i}`, 1, i));
    await node.kill(); // at once after the acknowledgement of seq 5: before the next checkpoint
    expect(acks.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);

    const again = await startNode({ dataDir, args: ARGS });
    expect(replayedFrames(again)).toBeGreaterThanOrEqual(3);
    // The append the client did not know had succeeded, retried: acknowledged, not written again.
    expect(await append(again, 'r5', 1, 5)).toEqual({ ...acks[5]!, duplicate: 'true' });
    // A replayed one and a checkpointed one among the last five: exact acknowledgements.
    expect(await append(again, 'r3', 1, 3)).toEqual({ ...acks[3]!, duplicate: 'true' });
    expect(await append(again, 'r1', 1, 1)).toEqual({ ...acks[1]!, duplicate: 'true' });
    // Older than the last five: acknowledged as a duplicate, without seqs.
    const old = await append(again, 'r0', 1, 0);
    expect([old.status, old.duplicate, old.start, old.next]).toEqual([200, 'true', null, null]);
    // The epoch survived too: an older one is fenced.
    const stale = await append(again, 'x', 0, 6);
    expect([stale.status, stale.producerEpoch]).toEqual([403, '1']);
    const gap = await append(again, 'x', 1, 8);
    expect(gap.status).toBe(409);
    expect(await bodies(again)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    const next = await append(again, 'r6', 1, 6);
    expect([next.status, next.start, next.next]).toEqual([200, '6', '7']);
    expect(await again.stop()).toBe(0);
  });
});
