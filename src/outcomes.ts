/**
 * Outcomes: what the storage layer says when it refuses a write for a reason the client acts on
 * (an idempotent producer's sequence or epoch, a sealed stream). The shard names the outcome and
 * its facts; each listener maps it in its own total table: the Svc listener to its headers
 * (gateway/kit/http-errors.ts), the Durable Streams listener to the DS headers and status
 * (gateway/ds/ds-errors.ts), the Kafka listener to a Kafka error code (kafka-wire/error-codes.ts).
 * No header name and no Kafka number lives below the edge.
 *
 * An outcome travels on its SvcError (`outcome`), which fixes the error code (errors.ts
 * OUTCOME_CODE), and crosses the worker-thread hop with it as plain data (ErrorData).
 * A duplicate the stream still remembers is not a refusal: it is a success (AppendResult.duplicate).
 */

/** Every outcome kind (docs/errors.md, "Outcomes", lists them). */
export const OUTCOME_KINDS = ['duplicate', 'stale_epoch', 'invalid_epoch_seq', 'unknown_producer', 'sequence_gap', 'closed', 'moved', 'maybe_written'] as const;

export type OutcomeKind = (typeof OUTCOME_KINDS)[number];

export type Outcome =
  /**
   * A Kafka producer's batch repeats a sequence written longer ago than the acknowledgements the
   * stream keeps (its offsets are forgotten; Kafka: DUPLICATE_SEQUENCE_NUMBER).
   */
  | { kind: 'duplicate'; receivedSeq: number }
  /** The producer's epoch is older than one the stream has seen: a newer instance fenced it. */
  | { kind: 'stale_epoch'; currentEpoch: number }
  /** A new epoch of a known producer must start at sequence 0. */
  | { kind: 'invalid_epoch_seq'; expectedSeq: 0; receivedSeq: number }
  /** A producer the stream does not know (never seen, or evicted) must start at sequence 0. */
  | { kind: 'unknown_producer'; expectedSeq: 0; receivedSeq: number }
  /** The sequence does not follow the producer's last accepted one. */
  | { kind: 'sequence_gap'; expectedSeq: number; receivedSeq: number }
  /** The stream is sealed; `producerSeq` is the refused producer append's sequence (null without a producer). */
  | { kind: 'closed'; producerSeq: number | null }
  /**
   * Objects mode: the stream's fence moved to another node (docs/cluster.md, "Objects mode: where
   * data lives"): the write was not acknowledged and nothing of it is visible here; retry (at the
   * new owner, `nodeId` when known).
   */
  | { kind: 'moved'; nodeId: number | null }
  /**
   * Objects mode: the write's group did not become durable within the stall limit (etcd or the
   * object store not answering; docs/cluster.md, "When etcd or the object store does not
   * answer"). It may still be written once they answer: the client must retry it as the same
   * write (an idempotent producer's same id, epoch and sequence), which is then deduplicated.
   * Also given to the writes the shard refuses at once while such a group is pending: a producer
   * whose earlier batch is in doubt must keep its sequence rather than start a new epoch.
   */
  | { kind: 'maybe_written' };
