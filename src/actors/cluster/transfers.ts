/**
 * Transfers (spec "Transfer"; docs/cluster.md, "Transfers and failover"): `POST /admin/transfer
 * {stream, toNode}` moves a stream's placement to another live node.
 *
 *   validate: a row exists, not being created or deleted; toNode is a known live node
 *     toNode = the current owner, nothing pending ──▶ pending: false (nothing to do)
 *     a move of this stream pending to toNode    ──▶ pending: true (the same request again)
 *     a move pending to another node             ──▶ 400 (conflicting pending transfer)
 *   CAS the row: {nodeId: toNode, epoch: e + 1, state: opening, from: owner} ──▶ pending: true
 *
 * The rest is asynchronous: the new owner opens it (moves.ts: takes the fence, imports it from the
 * object store, marks it placed); the old owner's writes are fenced from the moment the new owner
 * takes the fence, and it drops its local copy when it sees the row name another node.
 * Only in objects mode: without an object store a move would be a bulk copy between disks.
 */
import { SvcError } from '../../errors';
import { MetaConflictError } from '../meta/meta-store';
import { type Membership } from './membership';
import { type Placement, isMoving } from './placement';

export interface TransferResult {
  stream: string;
  streamId: number;
  toNode: number;
  pending: boolean;
}

export interface PendingTransfer {
  streamId: number;
  fromNode: number;
  toNode: number;
}

export class Transfers {
  readonly #placement: Placement;
  readonly #members: Membership;
  /** Streams can move (objects mode: their data is in the object store). */
  readonly #enabled: boolean;

  constructor(placement: Placement, members: Membership, enabled: boolean) {
    this.#placement = placement;
    this.#members = members;
    this.#enabled = enabled;
  }

  async transfer(stream: string, toNode: number): Promise<TransferResult> {
    for (;;) {
      const cur = this.#placement.row(stream);
      if (cur === null) throw new SvcError('not_found', `no stream ${stream}`);
      const { row } = cur;
      const streamId = row.streamId !== 0 ? row.streamId : cur.version;
      if (row.remove === true) throw new SvcError('bad_request', `stream ${stream} is being deleted`);
      if (isMoving(row)) {
        if (row.nodeId === toNode) return { stream, streamId, toNode, pending: true };
        throw new SvcError('bad_request', `stream ${stream} has a pending transfer from node ${row.from} to node ${row.nodeId}; wait until it is placed`);
      }
      if (row.state !== 'placed') throw new SvcError('bad_request', `stream ${stream} is still being created on node ${row.nodeId}`);
      if (toNode === row.nodeId) return { stream, streamId, toNode, pending: false };
      const target = this.#members.node(toNode);
      if (target === null) throw new SvcError('bad_request', `node ${toNode} is not a valid target: there is no such node`);
      if (!this.#members.isLive(toNode)) throw new SvcError('bad_request', `node ${toNode} is not a valid target: it is not live`);
      if (!this.#enabled) throw new SvcError('bad_request', `node ${toNode} is not a valid target: streams move between nodes only with --objects (their data in the object store); the owner is node ${row.nodeId}`);
      try {
        await this.#placement.move(stream, cur, toNode);
        return { stream, streamId, toNode, pending: true };
      } catch (err) {
        // The row changed under us (another transfer, a failover, a delete): judge again.
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
  }

  /** The pending move of `stream`, or null (stream detail's pendingTransfer). */
  pendingOf(stream: string): { fromNode: number; toNode: number } | null {
    const cur = this.#placement.row(stream);
    return cur === null || !isMoving(cur.row) ? null : { fromNode: cur.row.from!, toNode: cur.row.nodeId };
  }

  /** Every pending move (the cluster overview's pendingTransfers), by stream name. */
  pending(): PendingTransfer[] {
    return this.#placement.pendingMoves().map(({ row }) => ({ streamId: row.streamId, fromNode: row.from!, toNode: row.nodeId }));
  }
}
