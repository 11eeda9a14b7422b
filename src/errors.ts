import { type Outcome, type OutcomeKind } from './outcomes';

/**
 * The closed list of error codes the product uses. Each edge owns one table that maps
 * a code to its wire shape (HTTP status + JSON body here; Kafka error codes and S3 XML later).
 * docs/errors.md lists every code; test/errors.test.ts fails when the two disagree.
 *
 * Errors cross the worker-thread boundary as plain data ({code, message, details, outcome}):
 * a subclassed Error loses its class and `code` in postMessage.
 */
export const ERROR_CODES = [
  'bad_request',
  'invalid_stream_name',
  'invalid_parameter',
  'invalid_json',
  'invalid_batch',
  'empty_batch',
  'unsupported_compression',
  'corrupt_batch',
  'invalid_schema',
  'schema_validation_failed',
  'record_invalid',
  'unsupported_media_type',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'stream_closed',
  'seq_out_of_range',
  'seq_mismatch',
  'producer_fenced',
  'record_too_large',
  'batch_too_large',
  'request_too_large',
  'shutting_down',
  'storage_unavailable',
  'data_corrupt',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** How an error travels between threads and layers. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  /** A refusal the storage layer names (outcomes.ts); each listener maps it. */
  outcome?: Outcome;
}

/** The error code each outcome is refused with (its HTTP status in the listeners' code tables). */
const OUTCOME_CODE: Record<OutcomeKind, ErrorCode> = {
  duplicate: 'conflict',
  stale_epoch: 'producer_fenced',
  invalid_epoch_seq: 'conflict',
  unknown_producer: 'conflict',
  sequence_gap: 'conflict',
  closed: 'stream_closed',
  moved: 'storage_unavailable',
  maybe_written: 'storage_unavailable',
};

/** The codes answered with a 5xx: a fault of the node's, whose stack an operator may need. */
const KEEPS_STACK: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['shutting_down', 'storage_unavailable', 'data_corrupt', 'internal']);

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** Set when the storage layer refused with a named outcome (outcomes.ts). */
  readonly outcome: Outcome | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, outcome?: Outcome) {
    // A refusal (a 4xx: not found, conflict, bad input) says what the client asked for, not where
    // the node went wrong, and capturing its stack was the largest part of what a 404 cost (some
    // 10 µs on the gateway thread and more on the shard worker, which throws it first): only
    // the codes answered with a 5xx keep theirs, for the log.
    const limit = Error.stackTraceLimit;
    if (!KEEPS_STACK.has(code)) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'SvcError';
    this.code = code;
    this.details = details;
    this.outcome = outcome;
  }

  /** A refusal with a named outcome; the code follows from the outcome's kind. */
  static refused(outcome: Outcome, message: string, details?: Record<string, unknown>): SvcError {
    return new SvcError(OUTCOME_CODE[outcome.kind], message, details, outcome);
  }

  toData(): ErrorData {
    const d: ErrorData = { code: this.code, message: this.message };
    if (this.details !== undefined) d.details = this.details;
    if (this.outcome !== undefined) d.outcome = this.outcome;
    return d;
  }

  static fromData(d: ErrorData): SvcError {
    return new SvcError(d.code, d.message, d.details, d.outcome);
  }
}

export function isErrorCode(s: string): s is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(s);
}
