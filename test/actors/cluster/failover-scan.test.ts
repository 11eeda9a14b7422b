/**
 * The failover driver's scan (src/actors/cluster/failover.ts) against a stub placement: every
 * placement row's change kicks it, so it reads the rows only when a node that owns some has no
 * live lease. Before, each change listed every row: O(streams) per stream created.
 */
import { FailoverDriver } from '../../../src/actors/cluster/failover';
import { type MaintenanceLease } from '../../../src/actors/cluster/maintenance-lease';
import { type Membership } from '../../../src/actors/cluster/membership';
import { type Placement, type PlacementRow } from '../../../src/actors/cluster/placement';
import { type MetaStore } from '../../../src/actors/meta/meta-store';
import { createLogger } from '../../../src/log';

type Listener = (key: string, rec: { value: unknown; version: number } | null) => void;

class StubMeta {
  readonly listeners: Listener[] = [];
  onChange(l: Listener): void {
    this.listeners.push(l);
  }
  emit(key: string, rec: { value: unknown; version: number } | null): void {
    for (const l of this.listeners) l(key, rec);
  }
}

/** Rows in memory; `rows()` counts its calls, `move` rewrites the row to its target. */
class StubPlacement {
  readonly rows_ = new Map<string, { row: PlacementRow; version: number }>();
  listed = 0;
  moves: Array<{ name: string; to: number }> = [];

  owners(): number[] {
    return [...new Set([...this.rows_.values()].map((r) => r.row.nodeId))];
  }
  rows(): Array<{ name: string; row: PlacementRow; version: number }> {
    this.listed++;
    return [...this.rows_].map(([name, r]) => ({ name, ...r }));
  }
  chooseAmong(_name: string, nodes: ReadonlyArray<{ nodeId: number; slots: number }>): number | null {
    return nodes[0]?.nodeId ?? null;
  }
  async reserve<T>(_nodeId: number, _topic: string | null, write: () => Promise<T>): Promise<T> {
    return write();
  }
  async move(name: string, cur: { row: PlacementRow; version: number }, to: number): Promise<PlacementRow> {
    const row: PlacementRow = { ...cur.row, nodeId: to, epoch: cur.row.epoch + 1, state: 'opening', from: cur.row.nodeId };
    this.rows_.set(name, { row, version: cur.version + 1 });
    this.moves.push({ name, to });
    return row;
  }
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

test('row changes cost no scan of the rows while every owner is live; a node that goes makes one that moves its rows', async () => {
  const meta = new StubMeta();
  const placement = new StubPlacement();
  const live = new Set([1, 2]);
  const members = {
    isLive: (id: number) => live.has(id),
    placeableNodes: () => [...live].map((nodeId) => ({ nodeId, slots: 1 })),
  };
  const lease = { isHolder: () => true, onHolderChange: () => undefined };
  const driver = new FailoverDriver(meta as unknown as MetaStore, placement as unknown as Placement, members as unknown as Membership, lease as unknown as MaintenanceLease, createLogger('error', { write: () => undefined }));

  // 1,000 streams created, each a row change that kicks the driver.
  for (let i = 0; i < 1000; i++) {
    const row: PlacementRow = { streamId: i, nodeId: 1 + (i % 2), epoch: 1, state: 'placed' };
    placement.rows_.set(`s${i}`, { row, version: 1 });
    meta.emit(`placement/s${i}`, { value: row, version: 1 });
    if (i % 100 === 0) await settle();
  }
  await settle();
  expect(placement.listed).toBe(0);
  expect(placement.moves).toEqual([]);

  // Node 2's live lease goes: its 500 streams move to node 1, and a scan after that reads nothing again.
  live.delete(2);
  meta.emit('live/2', null);
  for (let i = 0; i < 50 && placement.moves.length < 500; i++) await settle();
  expect(placement.moves).toHaveLength(500);
  expect(new Set(placement.moves.map((m) => m.to))).toEqual(new Set([1]));
  const listed = placement.listed;
  expect(listed).toBeGreaterThan(0);
  meta.emit('placement/s0', { value: placement.rows_.get('s0')!.row, version: 2 });
  await settle();
  expect(placement.listed).toBe(listed);
  driver.stop();
});
