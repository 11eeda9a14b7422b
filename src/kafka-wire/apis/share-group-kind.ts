/**
 * Whether the classic group APIs (DescribeGroups, DeleteGroups) take a group id for a share group
 * (KIP-932). Kafka keeps one group per id; here the share groups (share/) and the classic and
 * consumer groups (groups/) are held apart, and an HTTP leaser can make a share group of any id,
 * so when both know an id, the one with members wins, and a classic or consumer group when
 * neither or both have members (the rule ListGroups lists them by).
 */
import { type KafkaContext } from '../context';

export function isShareGroup(ctx: KafkaContext, groupId: string, now: number): boolean {
  if (ctx.share.state(groupId, now) === null) return false;
  const other = ctx.groups.describe(groupId).state;
  return other === 'Empty' || other === 'Dead';
}
