/**
 * `svc groups ls|describe`: the groups of all three kinds — classic and KIP-848 consumer groups of
 * the Kafka listener, and share groups leased over Kafka or HTTP — as the admin API's
 * `/admin/groups` shows them (docs/dashboard.md). Like Kafka's kafka-consumer-groups.sh and
 * kafka-share-groups.sh: a list with one line per group, and per group its members, committed
 * offsets with lag, or share partitions with records in flight.
 */
import { type Command } from 'commander';
import { CliError, EXIT } from '../errors';
import { sendJson } from '../http';
import { emit, fields, table } from '../output';
import { type Registry } from '../program';

interface TopicPartitions {
  topic: string;
  partitions: number[];
}

interface Totals {
  delivered: number;
  redelivered: number;
  acknowledged: number;
  archived: number;
}

/** The admin API's group document (src/gateway/admin/group-doc.ts), as far as this command reads it. */
interface Group {
  groupId: string;
  kind: 'classic' | 'consumer' | 'share';
  state: string;
  protocolType: string;
  protocolName: string;
  groupEpoch: number | null;
  coordinator: number | null;
  coordinatedHere: boolean;
  members: Array<{ memberId: string; instanceId: string | null; clientId: string; clientHost: string; memberEpoch: number | null; assignment: TopicPartitions[] }>;
  offsets: Array<{ topic: string; partition: number; committed: number; end: number | null; lag: number | null }>;
  share: null | {
    inFlight: number;
    redeliveryPending: number;
    lag: number;
    totals: Totals;
    partitions: Array<{ stream: string; topic: string | null; partition: number | null; startOffset: number; endOffset: number | null; lag: number | null; inFlight: number; redeliveryPending: number; totals: Totals }>;
  };
}

const lagOf = (g: Group): number => (g.share !== null ? g.share.lag : g.offsets.reduce((n, o) => n + (o.lag ?? 0), 0));
const assigned = (a: readonly TopicPartitions[]): string => (a.length === 0 ? '-' : a.map((t) => `${t.topic}[${t.partitions.join(',')}]`).join(' '));

function describeText(g: Group, width: number): string {
  const head: Record<string, unknown> = { group: g.groupId, kind: g.kind, state: g.state, protocol: g.protocolName === '' ? g.protocolType : `${g.protocolType}/${g.protocolName}` };
  if (g.groupEpoch !== null) head['epoch'] = g.groupEpoch;
  head['coordinator'] = g.coordinator === null ? 'none' : g.coordinatedHere ? `node ${g.coordinator} (this node)` : `node ${g.coordinator} (members are shown by its admin API)`;
  head['lag'] = lagOf(g);
  if (g.share !== null) Object.assign(head, { inFlight: g.share.inFlight, redeliveryPending: g.share.redeliveryPending, ...g.share.totals });
  const members = g.members.map((m) => ({ member: m.memberId, epoch: m.memberEpoch ?? '-', assigned: assigned(m.assignment), client: m.clientId, host: m.clientHost, instance: m.instanceId ?? '-' }));
  let out = fields(head) + '\n' + (members.length === 0 ? 'no members\n' : table(members, ['member', 'epoch', 'assigned', 'client', 'host', 'instance'], width));
  if (g.share !== null) {
    const rows = g.share.partitions.map((p) => ({ stream: p.stream, partition: p.topic === null ? '-' : `${p.topic}/${p.partition}`, start: p.startOffset, end: p.endOffset ?? '-', lag: p.lag ?? '-', inFlight: p.inFlight, pending: p.redeliveryPending, acknowledged: p.totals.acknowledged, redelivered: p.totals.redelivered, archived: p.totals.archived }));
    out += '\n' + (rows.length === 0 ? 'no partitions\n' : table(rows, ['stream', 'partition', 'start', 'end', 'lag', 'inFlight', 'pending', 'acknowledged', 'redelivered', 'archived'], width));
  } else {
    const rows = g.offsets.map((o) => ({ topic: o.topic, partition: o.partition, committed: o.committed, end: o.end ?? '-', lag: o.lag ?? '-' }));
    out += '\n' + (rows.length === 0 ? 'no committed offsets\n' : table(rows, ['topic', 'partition', 'committed', 'end', 'lag'], width));
  }
  return out;
}

export function registerGroups(program: Command, { action }: Registry): void {
  const groups = program.command('groups').description('consumer groups and share groups (admin API)');
  groups
    .command('ls')
    .description('every group: kind, state, members, lag')
    .action(
      action(async (ctx) => {
        const doc = await sendJson<{ groups: Group[] }>(ctx, 'admin', '/admin/groups');
        const rows = doc.groups.map((g) => ({ group: g.groupId, kind: g.kind, state: g.state, members: g.members.length, lag: lagOf(g), inFlight: g.share?.inFlight ?? '-', coordinator: g.coordinator ?? '-' }));
        emit(ctx, doc, () => table(rows, ['group', 'kind', 'state', 'members', 'lag', 'inFlight', 'coordinator'], ctx.io.columns));
      }),
    );
  groups
    .command('describe')
    .description("a group's members and assignments, and its offsets and lag or its share partitions")
    .argument('<group>')
    .action(
      action(async (ctx, [id]) => {
        const doc = await sendJson<{ groups: Group[] }>(ctx, 'admin', `/admin/groups?group=${encodeURIComponent(String(id))}`);
        const g = doc.groups[0];
        if (g === undefined) throw new CliError(`group ${String(id)} not found`, EXIT.notFound);
        emit(ctx, g, () => describeText(g, ctx.io.columns));
      }),
    );
}
