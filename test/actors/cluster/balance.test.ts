/** Balanced placement and the rebalance plan (docs/cluster.md, "Placement", "Rebalance"). */
import { type NodeLoad, type PlacedStream, leastLoaded, planRebalance } from '../../../src/actors/cluster/balance';

/** Place `names` one after another (as a topic's partitions are), counting each choice; the count per node. */
function placeAll(names: readonly string[], nodes: NodeLoad[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of names) {
    const id = leastLoaded(name, nodes)!;
    const n = nodes.find((x) => x.nodeId === id)!;
    n.streams++;
    n.group++;
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}

const equal = (streams: number[] = [0, 0, 0]): NodeLoad[] => streams.map((s, i) => ({ nodeId: i + 1, slots: 1024, streams: s, group: 0 }));

test('a 6-partition topic on 3 equal nodes is placed 2/2/2, whatever else the nodes hold', () => {
  const names = ['/t', ...[1, 2, 3, 4, 5].map((p) => `/t/${p}`)];
  expect([...placeAll(names, equal()).values()]).toEqual([2, 2, 2]);
  // Node 1 already holds many streams: the topic is still spread first.
  expect([...placeAll(names, equal([40, 3, 0])).entries()].sort()).toEqual([[1, 2], [2, 2], [3, 2]]);
});

test('without a group, a new stream goes to the node with the fewest streams per slot', () => {
  expect(leastLoaded('/a', equal([5, 2, 9]))).toBe(2);
  // Twice the slots: twice the streams before it is as full.
  const nodes: NodeLoad[] = [
    { nodeId: 1, slots: 2048, streams: 7, group: 0 },
    { nodeId: 2, slots: 1024, streams: 4, group: 0 },
  ];
  expect(leastLoaded('/b', nodes)).toBe(1);
});

test('a node with 0 slots takes nothing, and ties are broken the same way whatever the order of the nodes', () => {
  expect(leastLoaded('/a', [{ nodeId: 1, slots: 0, streams: 0, group: 0 }])).toBeNull();
  expect(leastLoaded('/a', [{ nodeId: 1, slots: 0, streams: 0, group: 0 }, { nodeId: 2, slots: 1, streams: 9, group: 0 }])).toBe(2);
  for (let i = 0; i < 200; i++) {
    const a = equal();
    expect(leastLoaded(`/n${i}`, a)).toBe(leastLoaded(`/n${i}`, [a[2]!, a[0]!, a[1]!]));
  }
});

const streamsOn = (counts: Record<number, number>, group: (i: number) => string | null = () => null): PlacedStream[] =>
  Object.entries(counts).flatMap(([node, n]) => Array.from({ length: n }, (_, i) => ({ name: `/s/${node}/${i}`, nodeId: Number(node), group: group(i) })));

function after(streams: readonly PlacedStream[], moves: ReadonlyArray<{ stream: string; toNode: number }>): Map<number, number> {
  const at = new Map(streams.map((s) => [s.name, s.nodeId]));
  for (const m of moves) at.set(m.stream, m.toNode);
  const out = new Map<number, number>();
  for (const id of at.values()) out.set(id, (out.get(id) ?? 0) + 1);
  return out;
}

test('a node that came back empty gets its share, with as few moves as that takes', () => {
  const nodes = [1, 2, 3].map((nodeId) => ({ nodeId, slots: 1024 }));
  const streams = streamsOn({ 1: 15, 2: 15 });
  const moves = planRebalance(streams, nodes);
  expect(moves).toHaveLength(10);
  expect(after(streams, moves)).toEqual(new Map([[1, 10], [2, 10], [3, 10]]));
  expect(moves.every((m) => m.toNode === 3)).toBe(true);
});

test('nodes already as even as whole streams allow get no moves', () => {
  const nodes = [1, 2, 3].map((nodeId) => ({ nodeId, slots: 1024 }));
  expect(planRebalance(streamsOn({ 1: 3, 2: 2, 3: 2 }), nodes)).toEqual([]);
  expect(planRebalance(streamsOn({ 1: 1, 2: 1 }), nodes)).toEqual([]);
  expect(planRebalance([], nodes)).toEqual([]);
});

test('shares follow slots; a node with 0 slots and streams of dead nodes are left where they are', () => {
  const nodes = [
    { nodeId: 1, slots: 2048 },
    { nodeId: 2, slots: 1024 },
    { nodeId: 3, slots: 0 },
  ];
  const streams = [...streamsOn({ 2: 9, 3: 4, 4: 5 })];
  const moves = planRebalance(streams, nodes);
  expect(moves.every((m) => m.fromNode === 2 && m.toNode === 1)).toBe(true);
  const end = after(streams, moves);
  expect([end.get(1), end.get(2), end.get(3), end.get(4)]).toEqual([6, 3, 4, 5]);
});

test('a move prefers a stream of a topic the source holds more of than the target', () => {
  const nodes = [1, 2].map((nodeId) => ({ nodeId, slots: 1 }));
  const streams: PlacedStream[] = [
    { name: '/a', nodeId: 1, group: null },
    { name: '/b', nodeId: 1, group: null },
    { name: '/t/1', nodeId: 1, group: 't' },
    { name: '/t/2', nodeId: 1, group: 't' },
  ];
  expect(planRebalance(streams, nodes)).toEqual([
    { stream: '/t/1', fromNode: 1, toNode: 2 },
    { stream: '/a', fromNode: 1, toNode: 2 },
  ]);
});

test('the plan is the same for the same rows, in any order', () => {
  const nodes = [1, 2, 3].map((nodeId) => ({ nodeId, slots: 1024 }));
  const streams = streamsOn({ 1: 12, 2: 1, 3: 5 });
  expect(planRebalance([...streams].reverse(), [...nodes].reverse())).toEqual(planRebalance(streams, nodes));
});
