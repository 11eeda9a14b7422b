/**
 * What a topic's replication factor means here (docs/kafka.md, "Replication factor"). A partition
 * is one stream, served by one node at a time (its owner, the leader in Metadata):
 *
 *   local disk (single node, or a cluster without --objects)  one copy, on the owner's disk: 1
 *   objects mode (--objects)                                  the object store keeps the copies,
 *                                                             and any live broker takes a partition
 *                                                             over from it (failover): 1 … live brokers
 *
 * As in Kafka, a factor above the live brokers is INVALID_REPLICATION_FACTOR (with Kafka's own
 * message), and so is 0 or below (-1 asks for the broker's default, 1). On local disk a factor
 * above 1 is refused too: accepting it would promise copies that do not exist.
 */

/** Why `factor` cannot be given to a topic created now, or null. `objects`: objects mode. */
export function replicationFactorProblem(factor: number, liveBrokers: number, objects: boolean): string | null {
  if (factor === -1) return null;
  if (factor < 1) return 'Replication factor must be larger than 0, or -1 to use the default value.';
  if (factor > liveBrokers) return `Replication factor: ${factor} larger than available brokers: ${liveBrokers}.`;
  if (factor > 1 && !objects) return `Replication factor: ${factor}: partitions are stored on their owner's disk alone (one copy); only objects mode (--objects) keeps them durable beyond one node`;
  return null;
}

/** The factor a created topic reports: the one asked for, 1 for the default. */
export function effectiveReplicationFactor(factor: number): number {
  return factor === -1 ? 1 : factor;
}
