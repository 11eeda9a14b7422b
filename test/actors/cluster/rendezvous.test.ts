/** Weighted rendezvous hashing (docs/cluster.md, "Placement"): shares follow slots, 0 takes nothing, a new node takes only what it wins. */
import { rendezvous } from '../../../src/actors/cluster/rendezvous';

const names = Array.from({ length: 20_000 }, (_, i) => `/orders/${i}`);

function shares(candidates: Array<{ nodeId: number; slots: number }>): Map<number, number> {
  const out = new Map<number, number>();
  for (const n of names) {
    const id = rendezvous(n, candidates)!;
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}

test('new streams go to the nodes in proportion to their slots, and none to a node with 0 slots', () => {
  const s = shares([
    { nodeId: 1, slots: 1024 },
    { nodeId: 2, slots: 2048 },
    { nodeId: 3, slots: 0 },
  ]);
  expect(s.get(3)).toBeUndefined();
  expect(s.get(1)! / names.length).toBeCloseTo(1 / 3, 1);
  expect(s.get(2)! / names.length).toBeCloseTo(2 / 3, 1);
});

test('the choice depends only on the candidates, not on their order', () => {
  const a = [{ nodeId: 1, slots: 10 }, { nodeId: 2, slots: 10 }, { nodeId: 3, slots: 5 }];
  const b = [a[2]!, a[0]!, a[1]!];
  for (const n of names.slice(0, 2000)) expect(rendezvous(n, a)).toBe(rendezvous(n, b));
});

test('adding a node moves only the streams the new node wins', () => {
  const before = [{ nodeId: 1, slots: 100 }, { nodeId: 2, slots: 100 }];
  const after = [...before, { nodeId: 3, slots: 100 }];
  let moved = 0;
  for (const n of names) {
    const x = rendezvous(n, before);
    const y = rendezvous(n, after);
    if (x !== y) {
      expect(y).toBe(3);
      moved++;
    }
  }
  expect(moved / names.length).toBeCloseTo(1 / 3, 1);
});

test('no candidate with slots: no choice', () => {
  expect(rendezvous('/x', [])).toBeNull();
  expect(rendezvous('/x', [{ nodeId: 1, slots: 0 }])).toBeNull();
});
