/**
 * The Kafka edge's error table: Kafka protocol error codes (kafka.apache.org/protocol,
 * "Error Codes") and the mapping from the product's error codes (src/errors.ts) to them.
 * docs/kafka.md lists the mapping.
 */
import { type ErrorCode, SvcError } from '../errors';
import { type OutcomeKind } from '../outcomes';

/** The Kafka error codes this listener answers with. */
export const KafkaError = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  MESSAGE_TOO_LARGE: 10,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  INVALID_REQUIRED_ACKS: 21,
  TOPIC_AUTHORIZATION_FAILED: 29,
  UNSUPPORTED_VERSION: 35,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REQUEST: 42,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  KAFKA_STORAGE_ERROR: 56,
  UNKNOWN_SERVER_ERROR: -1,
  UNKNOWN_PRODUCER_ID: 59,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  INVALID_RECORD: 87,
  UNKNOWN_TOPIC_ID: 100,
  ILLEGAL_SASL_STATE: 34,
  UNSUPPORTED_SASL_MECHANISM: 33,
  SASL_AUTHENTICATION_FAILED: 58,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  INVALID_CONFIG: 40,
  POLICY_VIOLATION: 44,
  NOT_COORDINATOR: 16,
  COORDINATOR_NOT_AVAILABLE: 15,
  CONCURRENT_TRANSACTIONS: 51,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  PRODUCER_FENCED: 90,
  GROUP_AUTHORIZATION_FAILED: 30,
  UNKNOWN_MEMBER_ID: 25,
  ILLEGAL_GENERATION: 22,
  OPERATION_NOT_ATTEMPTED: 55,
  UNSUPPORTED_ENDPOINT_TYPE: 115,
  // Share groups (KIP-932): ShareFetch and ShareAcknowledge.
  INVALID_RECORD_STATE: 121,
  SHARE_SESSION_NOT_FOUND: 122,
  INVALID_SHARE_SESSION_EPOCH: 123,
} as const;

/** Product error code → Kafka error code, for errors a data-plane call returns. */
const FROM_SVC: Partial<Record<ErrorCode, number>> = {
  not_found: KafkaError.UNKNOWN_TOPIC_OR_PARTITION,
  invalid_batch: KafkaError.CORRUPT_MESSAGE,
  corrupt_batch: KafkaError.CORRUPT_MESSAGE,
  empty_batch: KafkaError.CORRUPT_MESSAGE,
  unsupported_compression: KafkaError.UNSUPPORTED_COMPRESSION_TYPE,
  record_too_large: KafkaError.MESSAGE_TOO_LARGE,
  batch_too_large: KafkaError.RECORD_LIST_TOO_LARGE,
  request_too_large: KafkaError.RECORD_LIST_TOO_LARGE,
  schema_validation_failed: KafkaError.INVALID_RECORD,
  record_invalid: KafkaError.INVALID_RECORD,
  // A sealed stream takes no more records; Kafka has no closer code for a partition that refuses writes.
  stream_closed: KafkaError.INVALID_REQUEST,
  seq_out_of_range: KafkaError.OFFSET_OUT_OF_RANGE,
  producer_fenced: KafkaError.INVALID_PRODUCER_EPOCH,
  unauthorized: KafkaError.TOPIC_AUTHORIZATION_FAILED,
  forbidden: KafkaError.TOPIC_AUTHORIZATION_FAILED,
  // Retriable for clients: they refresh metadata and try again (on this node once it is back).
  shutting_down: KafkaError.NOT_LEADER_OR_FOLLOWER,
  storage_unavailable: KafkaError.KAFKA_STORAGE_ERROR,
  // Stored data failed its checksum: a consumer stops with an error instead of retrying (docs/storage.md).
  data_corrupt: KafkaError.CORRUPT_MESSAGE,
};

/**
 * Storage outcome (src/outcomes.ts) → Kafka error code. Total: a new outcome kind does not
 * compile until it has its code here, so it can never fall through to UNKNOWN_SERVER_ERROR.
 */
const FROM_OUTCOME: Record<OutcomeKind, number> = {
  // An idempotent producer's batch older than the acknowledgements kept (Kafka keeps 5 as well).
  duplicate: KafkaError.DUPLICATE_SEQUENCE_NUMBER,
  stale_epoch: KafkaError.INVALID_PRODUCER_EPOCH,
  // A new epoch starts at sequence 0: anything else is out of order, as a Kafka broker answers.
  invalid_epoch_seq: KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
  unknown_producer: KafkaError.UNKNOWN_PRODUCER_ID,
  sequence_gap: KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
  // A sealed stream takes no more records; Kafka has no closer code for a partition that refuses writes.
  closed: KafkaError.INVALID_REQUEST,
  // The partition moved to another node: clients refresh their metadata and go to the new leader.
  moved: KafkaError.NOT_LEADER_OR_FOLLOWER,
  // What Kafka answers a produce it may still write (acks=all timing out): the client retries with
  // the same producer epoch and sequence, and the retry is deduplicated. KAFKA_STORAGE_ERROR would
  // tell it nothing was written: librdkafka then bumps the epoch and re-sends, and the records are
  // written twice once the first write lands.
  maybe_written: KafkaError.REQUEST_TIMED_OUT,
};

/** The Kafka error code for an error thrown by a data-plane call: its outcome's when it has one, else its code's. */
export function kafkaErrorOf(err: unknown): number {
  if (!(err instanceof SvcError)) return KafkaError.UNKNOWN_SERVER_ERROR;
  if (err.outcome !== undefined) return FROM_OUTCOME[err.outcome.kind];
  return FROM_SVC[err.code] ?? KafkaError.UNKNOWN_SERVER_ERROR;
}

/**
 * The code of a topic create that failed (CreateTopics, CreatePartitions). A metadata store that
 * did not answer in time (no etcd quorum), or an owner that did not open its partition, is what a
 * Kafka controller answers REQUEST_TIMED_OUT for: retriable, and the topic may still appear (a
 * retry then gets TOPIC_ALREADY_EXISTS). KAFKA_STORAGE_ERROR is a Produce/Fetch code admin
 * clients do not expect here.
 */
export function createErrorOf(err: unknown): number {
  if (err instanceof SvcError && err.code === 'storage_unavailable' && err.outcome === undefined) return KafkaError.REQUEST_TIMED_OUT;
  return kafkaErrorOf(err);
}

/**
 * The code of a Metadata topic whose auto-create failed. A store that did not answer gets
 * LEADER_NOT_AVAILABLE, Kafka's answer for a topic whose partitions have no leader yet: clients ask
 * again after their backoff.
 */
export function autoCreateErrorOf(err: unknown): number {
  if (err instanceof SvcError && err.code === 'storage_unavailable') return KafkaError.LEADER_NOT_AVAILABLE;
  return kafkaErrorOf(err);
}

/** The message to send beside a Kafka error code (Produce v8+, CreateTopics, DeleteTopics v5+). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
