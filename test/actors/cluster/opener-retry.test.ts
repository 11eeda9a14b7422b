/**
 * The opener's retries (src/actors/cluster/moves.ts) against a stub placement and storage: an open
 * whose placing step failed (its answer lost, the row perhaps placed already and the copy taking
 * appends) is tried again by placing it only — opening the stream again would replace the copy
 * with entries read before those appends. An open that itself failed is tried again whole, and a
 * new move (a new epoch) opens afresh.
 */
import { StreamOpener, type MoveStorage } from '../../../src/actors/cluster/moves';
import { type Placement, type PlacementRow } from '../../../src/actors/cluster/placement';
import { type MetaStore } from '../../../src/actors/meta/meta-store';
import { createLogger } from '../../../src/log';

const ME = 2;

/** A placement holding rows in memory; markMoved runs `onMark` first (the test makes it fail). */
class StubPlacement {
  readonly nodeId = ME;
  readonly rows_ = new Map<string, { row: PlacementRow; version: number }>();
  onMark: (name: string, epoch: number) => Promise<void> = async () => undefined;
  marks = 0;

  row(name: string): { row: PlacementRow; version: number } | null {
    return this.rows_.get(name) ?? null;
  }

  rows(): Array<{ name: string; row: PlacementRow; version: number }> {
    return [...this.rows_].map(([name, r]) => ({ name, ...r }));
  }

  async markMoved(name: string, epoch: number): Promise<boolean> {
    this.marks++;
    await this.onMark(name, epoch);
    const cur = this.rows_.get(name)!;
    this.rows_.set(name, { row: { ...cur.row, state: 'placed' }, version: cur.version + 1 });
    return true;
  }

  async releaseMove(): Promise<void> {}
}

class StubMeta {
  readonly #listeners: Array<(key: string, rec: { value: unknown; version: number } | null) => void> = [];

  onChange(l: (key: string, rec: { value: unknown; version: number } | null) => void): void {
    this.#listeners.push(l);
  }

  emit(name: string, row: PlacementRow, version: number): void {
    for (const l of this.#listeners) l(`placement/${name}`, { value: row, version });
  }
}

function opener(): { meta: StubMeta; placement: StubPlacement; storage: MoveStorage & { opens: Array<{ name: string; epoch: number }>; failOpens: number }; o: StreamOpener } {
  const meta = new StubMeta();
  const placement = new StubPlacement();
  const storage = {
    opens: [] as Array<{ name: string; epoch: number }>,
    failOpens: 0,
    async open(name: string, epoch: number): Promise<'opened'> {
      storage.opens.push({ name, epoch });
      if (storage.failOpens > 0) {
        storage.failOpens--;
        throw new Error('etcd did not answer');
      }
      return 'opened';
    },
    async create(): Promise<void> {},
    async drop(): Promise<void> {},
    async localStreams(): Promise<string[]> {
      return [];
    },
  };
  const log = createLogger('error', { write: () => undefined });
  const o = new StreamOpener(meta as unknown as MetaStore, placement as unknown as Placement, storage, log);
  return { meta, placement, storage, o };
}

/** A move of `name` to this node at `epoch`, as the watch delivers it. */
function move(meta: StubMeta, placement: StubPlacement, name: string, epoch: number): void {
  const row: PlacementRow = { streamId: 7, nodeId: ME, epoch, state: 'opening', from: 1 };
  const version = (placement.row(name)?.version ?? 0) + 1;
  placement.rows_.set(name, { row, version });
  meta.emit(name, row, version);
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a failed placing step is tried again by placing only: the stream is opened once', async () => {
  const { meta, placement, storage, o } = opener();
  await o.start();
  placement.onMark = async () => {
    placement.onMark = async () => undefined;
    throw new Error('etcd did not answer'); // the answer lost (the put may have landed)
  };
  move(meta, placement, '/s', 2);
  await until('placed', () => placement.row('/s')!.row.state === 'placed');
  expect(placement.marks).toBe(2);
  expect(storage.opens).toEqual([{ name: '/s', epoch: 2 }]);
  expect(o.opened).toBe(1);
  o.stop();
});

test('a failed open is tried again whole; a later move opens afresh at its epoch', async () => {
  const { meta, placement, storage, o } = opener();
  await o.start();
  storage.failOpens = 1;
  move(meta, placement, '/s', 2);
  await until('placed', () => placement.row('/s')!.row.state === 'placed');
  expect(storage.opens).toEqual([
    { name: '/s', epoch: 2 },
    { name: '/s', epoch: 2 },
  ]);
  // Moved away and back: epoch 4 is a new open.
  const away: PlacementRow = { streamId: 7, nodeId: 1, epoch: 3, state: 'placed' };
  placement.rows_.set('/s', { row: away, version: 10 });
  meta.emit('/s', away, 10);
  move(meta, placement, '/s', 4);
  await until('placed again', () => placement.row('/s')!.row.state === 'placed');
  expect(storage.opens.map((x) => x.epoch)).toEqual([2, 2, 4]);
  o.stop();
});
