/**
 * The wire shape of every `__ds` answer: JSON bodies, and errors as
 * `{"error": {"code", "message", ...}}` with the status the code decides. The codes are the
 * Durable Streams protocol's own (its reference server answers the same), so they are not
 * product error codes: this table is the only place they meet HTTP statuses.
 */
import { type SubscriptionResponse } from './types';

export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  WEBHOOK_URL_REJECTED: 400,
  TOKEN_INVALID: 401,
  TOKEN_EXPIRED: 401,
  NOT_FOUND: 404,
  SUBSCRIPTION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SUBSCRIPTION_ALREADY_EXISTS: 409,
  FENCED: 409,
  ALREADY_CLAIMED: 409,
  NO_PENDING_WORK: 409,
  INVALID_OFFSET: 409,
  INTERNAL: 500,
  SHUTTING_DOWN: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An expected refusal, returned (not thrown) by the manager and turned into a response here. */
export interface Refusal {
  error: ErrorCode;
  message: string;
  /** Extra members of the error object (ALREADY_CLAIMED's `current_holder`, `generation`). */
  details?: Record<string, unknown>;
}

export const refuse = (error: ErrorCode, message: string, details?: Record<string, unknown>): Refusal =>
  details === undefined ? { error, message } : { error, message, details };

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && typeof (value as Refusal).error === 'string' && (value as Refusal).error in ERROR_STATUS;
}

export function json(status: number, body: unknown): SubscriptionResponse {
  return { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
}

export function noContent(): SubscriptionResponse {
  return { status: 204, headers: {}, body: '' };
}

export function errorReply(r: Refusal): SubscriptionResponse {
  return json(ERROR_STATUS[r.error], { error: { code: r.error, message: r.message, ...r.details } });
}

export function methodNotAllowed(allow: string[]): SubscriptionResponse {
  const reply = errorReply(refuse('METHOD_NOT_ALLOWED', `allowed: ${allow.join(', ')}`));
  reply.headers.allow = allow.join(', ');
  return reply;
}
