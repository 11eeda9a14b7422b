/**
 * The closed list of S3 error codes svc-cache answers with, and the one table that maps each
 * to its HTTP status. Bodies are S3-shaped XML (`<Error><Code>…`), never HTML, so every SDK
 * parses them. docs/s3-cache.md lists the same codes; test/s3/errors.test.ts keeps them in step.
 */
import { xmlEscape } from './xml';

export const S3_ERRORS = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  BadRequest: 400,
  IncompleteBody: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  InvalidAccessKeyId: 403,
  MalformedXML: 400,
  MissingContentLength: 411,
  PreconditionFailed: 412,
  RequestTimeTooSkewed: 403,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
  InternalError: 500,
} as const;

export type S3ErrorCode = keyof typeof S3_ERRORS;

/** An expected refusal: thrown inside a request handler, rendered once by the server. */
export class S3Error extends Error {
  readonly code: S3ErrorCode;
  /** Extra elements of the XML body (e.g. `RequestTime`, `ActualObjectSize`). */
  readonly extra: Record<string, string>;
  /** Extra response headers (e.g. `Content-Range` on 416). */
  readonly headers: Record<string, string>;

  constructor(code: S3ErrorCode, message: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'S3Error';
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }

  get status(): number {
    return S3_ERRORS[this.code];
  }
}

/** The XML body S3 sends with an error. */
export function errorXml(code: string, message: string, resource: string, requestId: string, extra: Record<string, string> = {}): string {
  let body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${xmlEscape(code)}</Code><Message>${xmlEscape(message)}</Message>`;
  for (const [k, v] of Object.entries(extra)) body += `<${k}>${xmlEscape(v)}</${k}>`;
  return body + `<Resource>${xmlEscape(resource)}</Resource><RequestId>${xmlEscape(requestId)}</RequestId></Error>`;
}
