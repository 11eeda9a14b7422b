/** The JSON object body of an admin request (every admin write takes one). */
import { SvcError } from '../../errors';
import { type HttpRequest } from '../http/engine';

/** The body parsed as a JSON object: `invalid_json` when it is not JSON, `bad_request` when it is not an object. */
export function parseBody(req: HttpRequest): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new SvcError('invalid_json', 'the body is not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SvcError('bad_request', 'the body must be a JSON object');
  return v as Record<string, unknown>;
}
