/** One client request as the handlers see it, parsed once. */
import { type RequestBody } from '../program/http';
import { type Target } from './addressing';
import { type Op } from './ops';
import { type Reply } from './reply';
import { type Verified } from './sigv4';

export interface Ctx {
  /** The request body as it arrives, or null when the request declared none. */
  body: RequestBody | null;
  res: Reply;
  method: string;
  /** Path as sent (still percent-encoded). */
  rawPath: string;
  /** Decoded query pairs in order. */
  query: readonly (readonly [string, string])[];
  /** Lower-case header names, values as SigV4 canonicalises them. */
  headers: Map<string, string>;
  target: Target;
  op: Op;
  /** The client's verified signature in static auth mode. */
  verified: Verified | undefined;
  requestId: string;
  /** The client sent `Expect: 100-continue`; answer 100 once the request is accepted. */
  expectContinue: boolean;
}
