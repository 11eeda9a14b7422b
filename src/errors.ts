/**
 * The closed list of error codes the product uses. Each edge owns one table that maps
 * a code to its wire shape (HTTP status + JSON body here; Kafka error codes and S3 XML later).
 * docs/errors.md lists every code; test/errors.test.ts fails when the two disagree.
 *
 * Errors cross the worker-thread boundary as plain data ({code, message, details}):
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
}

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'SvcError';
    this.code = code;
    this.details = details;
  }

  toData(): ErrorData {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  static fromData(d: ErrorData): SvcError {
    return new SvcError(d.code, d.message, d.details);
  }
}

export function isErrorCode(s: string): s is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(s);
}
