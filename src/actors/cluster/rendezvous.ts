/**
 * Weighted rendezvous hashing (docs/cluster.md, "Placement"): every candidate node scores the
 * stream name, `score = -slots / ln(u)` with `u` a uniform hash of (node id, name) in (0, 1), and
 * the highest score wins. A node gets new streams in proportion to its slots; 0 gets none; adding
 * or removing a node only moves the choices that node wins or loses, and every node that sees
 * the same nodes and slots makes the same choice without talking to the others.
 */
import { createHash } from 'node:crypto';

export interface Candidate {
  nodeId: number;
  slots: number;
}

/** The chosen node id, or null when no candidate has slots. */
export function rendezvous(name: string, candidates: readonly Candidate[]): number | null {
  let best: number | null = null;
  let bestScore = -Infinity;
  for (const c of candidates) {
    if (c.slots <= 0) continue;
    const score = rendezvousScore(name, c);
    if (score > bestScore || (score === bestScore && best !== null && c.nodeId < best)) {
      best = c.nodeId;
      bestScore = score;
    }
  }
  return best;
}

/** The candidate's weighted score for `name` (higher wins). */
export function rendezvousScore(name: string, c: Candidate): number {
  return -c.slots / Math.log(unitHash(c.nodeId, name));
}

/** A hash of (node, name) as a number strictly between 0 and 1 (48 bits of SHA-256). */
function unitHash(nodeId: number, name: string): number {
  const h = createHash('sha256').update(`${nodeId}\0${name}`).digest();
  return (h.readUIntBE(0, 6) + 0.5) / 2 ** 48;
}
