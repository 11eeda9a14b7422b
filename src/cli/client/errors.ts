/**
 * Exit codes of the client commands and the one error type they throw. A failure becomes an
 * exit code here and nowhere else, so scripts can rely on the table in docs/cli.md.
 */

export const EXIT = {
  ok: 0,
  /** Anything not named below: the node unreachable, a 400/413/415 answer, too many redirects. */
  failure: 1,
  /** Bad flags or arguments (also a profile that does not exist). */
  usage: 2,
  /** 401 or 403: no token, a wrong or revoked one, or a scope that does not cover the request. */
  auth: 3,
  /** 404: no such stream, schema, token or node. */
  notFound: 4,
  /** 409 or 412: content type differs, stream sealed, producer or seq condition failed, id exists. */
  conflict: 5,
  /** 5xx: the node failed or is stopping. */
  server: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The node's JSON error body (protocol listener: error, message, next_seq; admin: error). */
export interface ServerErrorBody {
  error: string;
  message?: string;
  next_seq?: number;
}

/** A failure the client reports and exits with; `status` is set when the node answered. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly status?: number,
    readonly body?: ServerErrorBody,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** The exit code for an HTTP error status. */
export function exitForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409 || status === 412) return EXIT.conflict;
  if (status >= 500) return EXIT.server;
  return EXIT.failure;
}

/** Builds the error for a non-2xx answer from its status and body text (JSON or not). */
export function serverError(status: number, text: string, what: string): CliError {
  let body: ServerErrorBody | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && typeof (parsed as ServerErrorBody).error === 'string') body = parsed as ServerErrorBody;
  } catch {
    // not JSON (a HEAD answer has no body): the status says it
  }
  const detail = body ? `${body.error}${body.message ? `: ${body.message}` : ''}${body.next_seq !== undefined ? ` (next_seq ${body.next_seq})` : ''}` : text.trim() || statusText(status);
  return new CliError(`${what}: ${status} ${detail}`, exitForStatus(status), status, body ?? { error: statusText(status) });
}

function statusText(status: number): string {
  const names: Record<number, string> = { 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed', 409: 'conflict', 412: 'seq_mismatch', 413: 'too_large', 415: 'unsupported_media_type', 500: 'internal', 503: 'unavailable' };
  return names[status] ?? `http_${status}`;
}
