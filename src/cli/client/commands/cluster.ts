/**
 * `svc cluster status|nodes|node slots|transfer|stream inspect`: the admin API
 * (stream-service spec, "Admin endpoints"). Any node's admin API describes the whole cluster.
 */
import { type Command } from 'commander';
import { jsonBody, sendJson, streamPath } from '../http';
import { emit, fields, table } from '../output';
import { type Registry } from '../program';
import { nonNegative, streamName } from '../args';

interface Node {
  nodeId: number;
  nodeEpoch: number;
  advertisedAddress: string;
  slots: number;
  openingCount: number;
  placedCount: number;
  local: boolean;
}

export function registerCluster(program: Command, { action }: Registry): void {
  const cluster = program.command('cluster').description('cluster state and operations (admin API)');
  cluster
    .command('status')
    .description('the cluster overview as this node sees it')
    .action(
      action(async (ctx) => {
        const doc = await sendJson<Record<string, unknown> & { pendingTransfers: unknown[] }>(ctx, 'admin', '/admin/cluster');
        emit(ctx, doc, () => fields({ ...doc, pendingTransfers: doc.pendingTransfers.length === 0 ? 'none' : doc.pendingTransfers }));
      }),
    );
  cluster
    .command('nodes')
    .description('the nodes, their slots and stream counts')
    .action(
      action(async (ctx) => {
        const doc = await sendJson<{ nodes: Node[] }>(ctx, 'admin', '/admin/nodes');
        emit(ctx, doc, () => table(doc.nodes as unknown as Record<string, unknown>[], ['nodeId', 'nodeEpoch', 'advertisedAddress', 'slots', 'openingCount', 'placedCount', 'local'], ctx.io.columns));
      }),
    );
  cluster
    .command('node')
    .description('change a node')
    .command('slots')
    .description("set a node's slot count (how many streams it may own)")
    .argument('<id>', 'node id')
    .argument('<slots>', 'integer >= 0')
    .action(
      action(async (ctx, [id, slots]) => {
        const node = await sendJson<Node>(ctx, 'admin', `/admin/nodes/${nonNegative(id, '<id>')}`, { method: 'POST', ...jsonBody({ slots: nonNegative(slots, '<slots>') }) });
        emit(ctx, node, () => fields(node as unknown as Record<string, unknown>));
      }),
    );
  cluster
    .command('transfer')
    .description('move a stream to another node (asynchronous)')
    .argument('<stream>')
    .argument('<node>', 'target node id')
    .action(
      action(async (ctx, [name, node]) => {
        const doc = await sendJson<{ stream: string; streamId: number; toNode: number; pending: boolean }>(ctx, 'admin', '/admin/transfer', {
          method: 'POST',
          ...jsonBody({ stream: streamName(name), toNode: nonNegative(node, '<node>') }),
        });
        emit(ctx, doc, () => `${doc.pending ? 'transfer pending' : 'nothing to move'}: ${doc.stream} to node ${doc.toNode}\n`);
      }),
    );
  cluster
    .command('stream')
    .description('stream placement')
    .command('inspect')
    .description("a stream's owner, placement and offsets")
    .argument('<stream>')
    .action(
      action(async (ctx, [name]) => {
        const doc = await sendJson<Record<string, unknown>>(ctx, 'admin', `/admin/streams${streamPath(streamName(name))}`);
        emit(ctx, doc, () => fields(doc));
      }),
    );
}
