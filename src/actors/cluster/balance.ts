/**
 * Balanced placement (docs/cluster.md, "Placement", "Rebalance"): where a new or failed-over stream
 * goes, and which streams move so that every live node holds its share.
 *
 *   new stream of group g (a Kafka topic; none for a plain stream)
 *     ──▶ among live nodes with slots: fewest streams of g per slot ──▶ fewest streams per slot
 *         ──▶ weighted rendezvous score (the same tie-break on every node)
 *
 *   rebalance: share_n = total × slots_n / Σ slots (live nodes with slots)
 *     while (fullest's streams − its share) + (emptiest's share − its streams) > 1, per slot:
 *       move one stream from the fullest to the emptiest, preferring a stream of a group the
 *       source holds more of than the target
 *
 * Rendezvous hashing alone (what placement used before) spreads many streams in proportion to
 * slots, but a handful unevenly: a 6-partition topic on 3 nodes came out 0/3/3 or 4/0/2, where
 * Kafka's assignment gives 2/2/2. Counting what each node already holds keeps small sets even;
 * the rendezvous score only breaks ties, so nodes that see the same view still agree, and a
 * create races only with creates of the same name (the create-only row write settles those).
 */
import { type Candidate, rendezvousScore } from './rendezvous';

/** A live node as placement weighs it. */
export interface NodeLoad extends Candidate {
  /** Streams placed on it (every row naming it, moving ones included). */
  streams: number;
  /** Streams of the new stream's group on it (0 when the stream has no group). */
  group: number;
}

/**
 * The node a new stream `name` goes to, or null when no candidate has slots: fewest streams of its
 * group per slot, then fewest streams per slot, then the highest rendezvous score.
 */
export function leastLoaded(name: string, nodes: readonly NodeLoad[]): number | null {
  let best: NodeLoad | null = null;
  let bestKey: [number, number, number] = [Infinity, Infinity, -Infinity];
  for (const n of nodes) {
    if (n.slots <= 0) continue;
    const key: [number, number, number] = [(n.group + 1) / n.slots, (n.streams + 1) / n.slots, rendezvousScore(name, n)];
    if (best === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && key[2] > bestKey[2])))) {
      best = n;
      bestKey = key;
    }
  }
  return best?.nodeId ?? null;
}

/** A placed stream as the rebalance plan sees it. */
export interface PlacedStream {
  name: string;
  nodeId: number;
  /** Its group (a Kafka topic), or null. */
  group: string | null;
}

/** One planned move. */
export interface PlannedMove {
  stream: string;
  fromNode: number;
  toNode: number;
}

/**
 * The moves that bring every live node with slots to its share of `streams`, as near as whole
 * streams allow, in the order to make them. Streams on nodes not in `nodes` (dead ones: failover's business) and nodes with 0
 * slots are left out of the shares; a node with 0 slots keeps what it has (slots only weigh new
 * work, docs/cluster.md "Slots"). Pure: the same input gives the same plan.
 */
export function planRebalance(streams: readonly PlacedStream[], nodes: readonly Candidate[]): PlannedMove[] {
  const weighted = nodes.filter((n) => n.slots > 0);
  const totalSlots = weighted.reduce((s, n) => s + n.slots, 0);
  if (weighted.length < 2 || totalSlots === 0) return [];
  const held = new Map<number, PlacedStream[]>(weighted.map((n) => [n.nodeId, []]));
  for (const s of [...streams].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) held.get(s.nodeId)?.push(s);
  const total = [...held.values()].reduce((s, l) => s + l.length, 0);
  const share = new Map(weighted.map((n) => [n.nodeId, (total * n.slots) / totalSlots]));
  const slotsOf = new Map(weighted.map((n) => [n.nodeId, n.slots]));
  const moves: PlannedMove[] = [];
  for (let guard = 0; guard <= total; guard++) {
    // The fullest and the emptiest node per slot (ties by node id, so the plan is stable).
    let from = -1;
    let to = -1;
    for (const id of [...held.keys()].sort((a, b) => a - b)) {
      const per = held.get(id)!.length / slotsOf.get(id)!;
      if (from === -1 || per > held.get(from)!.length / slotsOf.get(from)!) from = id;
      if (to === -1 || per < held.get(to)!.length / slotsOf.get(to)!) to = id;
    }
    const over = held.get(from)!.length - share.get(from)!;
    const under = share.get(to)! - held.get(to)!.length;
    // A move lowers the sum of squared distances from the shares only when over + under > 1
    // (by 2·(over + under) − 2): otherwise the nodes are as even as whole streams allow.
    if (from === to || over + under <= 1 + 1e-9) break;
    const source = held.get(from)!;
    const target = held.get(to)!;
    const groupCount = (list: readonly PlacedStream[], g: string | null): number => (g === null ? 0 : list.filter((s) => s.group === g).length);
    // A stream of a group the source holds more of than the target evens groups too; else the first by name.
    let pick = source.findIndex((s) => s.group !== null && groupCount(source, s.group) > groupCount(target, s.group) + 1);
    if (pick < 0) pick = 0;
    const [s] = source.splice(pick, 1);
    target.push(s!);
    moves.push({ stream: s!.name, fromNode: from, toNode: to });
  }
  return moves;
}
