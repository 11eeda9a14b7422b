/**
 * Refusals → Confluent's error codes. The body `{"error_code": N, "message": "…"}` is what every
 * Schema Registry client parses (a RestClientException / RestError carries both); the HTTP
 * status is the code's first three digits. A total table: a new refusal kind does not compile
 * until it has its code.
 */
import { type RefusalKind } from '../types';

export const ERROR_CODES: Record<RefusalKind, number> = {
  subject_not_found: 40401,
  version_not_found: 40402,
  schema_not_found: 40403,
  subject_soft_deleted: 40404,
  subject_not_soft_deleted: 40405,
  version_soft_deleted: 40406,
  version_not_soft_deleted: 40407,
  subject_compatibility_not_configured: 40408,
  subject_mode_not_configured: 40409,
  incompatible_schema: 409,
  invalid_schema: 42201,
  invalid_version: 42202,
  invalid_compatibility_level: 42203,
  invalid_mode: 42204,
  operation_not_permitted: 42205,
  reference_exists: 42206,
  invalid_request: 400,
  store_unavailable: 50001,
};

/** The HTTP status of an error code: 40401 → 404, 409 → 409, 50001 → 500. */
export function statusOf(code: number): number {
  return code < 1000 ? code : Math.floor(code / 100);
}
