/**
 * Group commit with a Replicator (objects mode, group-commit.ts): a group is written to the local
 * log only after the replicator made it durable, in group order and without fdatasync; frames of
 * a stream the replicator reports fenced are neither written nor applied and its replies get the
 * outcome `moved`; a group the stores do not take within stallMs has its replies answered
 * storage_unavailable and new writes are refused until it is durable.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { type Group, GroupCommit, type Refusal, type Replicator } from '../../src/shards/worker/group-commit';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { type StreamState } from '../../src/shards/worker/stream-state';
import { tempDir } from '../helpers/node-process';

const streamNamed = (name: string): StreamState => ({ meta: { name } }) as StreamState;

/** A replicator the test resolves by hand, group by group. */
class HandReplicator implements Replicator {
  readonly maxInFlight = 4;
  readonly overlapMinBytes = 0;
  constructor(
    readonly stallMs = 10_000,
    readonly flushMs = 0,
  ) {}
  readyForNext(): boolean {
    return false;
  }
  onReady(): void {}
  readonly waiting: Array<{ g: Group; resolve: (fenced: Map<StreamState, Refusal>) => void }> = [];
  replicate(g: Group): Promise<ReadonlyMap<StreamState, Refusal>> {
    return new Promise((resolve) => this.waiting.push({ g, resolve }));
  }
}

function setup(stallMs?: number, flushMs?: number): { gc: GroupCommit; rep: HandReplicator; dir: string; syncs: () => number } {
  const dir = path.join(tempDir('gc-replicator-'), 'log');
  const log = SegmentLog.open(dir, 1 << 30);
  const rep = new HandReplicator(stallMs, flushMs);
  let syncs = 0;
  const write = log.write.bind(log);
  log.write = (bufs, options) => {
    if (options?.sync !== false) syncs++;
    return write(bufs, options);
  };
  const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, rep);
  return { gc, rep, dir, syncs: () => syncs };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('group commit with a replicator (objects mode)', () => {
  it('writes locally (without fdatasync) and answers only after the replicator made the group durable', async () => {
    const { gc, rep, dir, syncs } = setup();
    const a = streamNamed('/a');
    const applied: string[] = [];
    const replies: string[] = [];
    gc.enqueue(a, Buffer.from('one'), () => applied.push('one'));
    gc.whenDurable((err) => replies.push(err === null ? 'ok' : err.code), () => 1, a);
    gc.flush();
    await tick();
    expect([applied, replies, rep.waiting.length]).toEqual([[], [], 1]);
    expect(fs.existsSync(path.join(dir, segmentFileName(0)))).toBe(false);
    rep.waiting[0]!.resolve(new Map());
    await gc.drain();
    expect([applied, replies, syncs()]).toEqual([['one'], ['ok'], 0]);
    expect(fs.readFileSync(path.join(dir, segmentFileName(0))).toString()).toBe('one');
  });

  it('refuses a fenced stream\'s writes with `moved` and writes and applies only the others', async () => {
    const { gc, rep, dir } = setup();
    const a = streamNamed('/a');
    const b = streamNamed('/b');
    const applied: string[] = [];
    const replies: Array<[string, string | null, unknown]> = [];
    const reply = (who: string) => (err: SvcError | null): void => void replies.push([who, err?.code ?? null, err?.outcome ?? null]);
    gc.enqueue(a, Buffer.from('A1'), () => applied.push('A1'));
    gc.enqueue(b, Buffer.from('B1'), () => applied.push('B1'));
    gc.whenDurable(reply('a'), () => 1, a);
    gc.whenDurable(reply('b'), () => 1, b);
    gc.flush();
    await tick();
    rep.waiting[0]!.resolve(new Map([[b, { kind: 'moved', nodeId: 7 }]]));
    await gc.drain();
    expect(applied).toEqual(['A1']);
    expect(replies.sort()).toEqual([
      ['a', null, null],
      ['b', 'storage_unavailable', { kind: 'moved', nodeId: 7 }],
    ]);
    expect(fs.readFileSync(path.join(dir, segmentFileName(0))).toString()).toBe('A1');
  });

  it('keeps several groups in flight (their object PUTs overlap) and writes them locally in group order', async () => {
    const { gc, rep, dir } = setup();
    const a = streamNamed('/a');
    gc.enqueue(a, Buffer.from('1'), null);
    gc.flush();
    gc.enqueue(a, Buffer.from('2'), null);
    gc.flush();
    await tick();
    expect(rep.waiting).toHaveLength(2); // both in flight: their PUTs overlap
    rep.waiting[0]!.resolve(new Map());
    rep.waiting[1]!.resolve(new Map());
    await gc.drain();
    expect(fs.readFileSync(path.join(dir, segmentFileName(0))).toString()).toBe('12');
  });

  it('answers a stalled group storage_unavailable, refuses new writes meanwhile, and applies it once durable', async () => {
    const { gc, rep } = setup(50);
    const a = streamNamed('/a');
    const applied: string[] = [];
    const replies: Array<string | null> = [];
    gc.enqueue(a, Buffer.from('x'), () => applied.push('x'));
    gc.whenDurable((err) => replies.push(err?.code ?? null), () => 1, a);
    gc.flush();
    await new Promise((r) => setTimeout(r, 120));
    expect([replies, gc.stalled]).toEqual([['storage_unavailable'], true]);
    rep.waiting[0]!.resolve(new Map());
    await gc.drain();
    // Its outcome was unknown to the client; the data is written and applied, the reply not repeated.
    expect([applied, replies, gc.stalled]).toEqual([['x'], ['storage_unavailable'], false]);
  });

  it('with a flush window (--objects-flush-ms) a group after a quiet spell starts at once, and the next gathers what arrives until the window after it', async () => {
    const { gc, rep } = setup(10_000, 200);
    const a = streamNamed('/a');
    gc.enqueue(a, Buffer.from('1'), null);
    gc.flush();
    expect(rep.waiting).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 5));
    gc.enqueue(a, Buffer.from('2'), null);
    gc.flush();
    await new Promise((r) => setTimeout(r, 5));
    gc.enqueue(a, Buffer.from('3'), null);
    gc.flush();
    expect(rep.waiting).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rep.waiting.map((w) => w.g.frames.get(a)!.map((f) => f.buf.toString()))).toEqual([['1'], ['2', '3']]);
    for (const w of rep.waiting) w.resolve(new Map());
    await gc.drain();
    await new Promise((r) => setTimeout(r, 250));
    // Quiet for longer than the window: the next group starts at once again.
    gc.enqueue(a, Buffer.from('4'), null);
    gc.flush();
    expect(rep.waiting).toHaveLength(3);
    rep.waiting[2]!.resolve(new Map());
    await gc.drain();
  });
});
