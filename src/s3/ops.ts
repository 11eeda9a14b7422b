/**
 * Which S3 operation a request is, as far as caching cares, and which reads the cache may
 * answer. The SDK v3 sends every GetObject as `?x-id=GetObject` with
 * `x-amz-checksum-mode: ENABLED`, so "any query → forward" would send every SDK read to the
 * origin: a read stays cacheable when its query holds only `x-id`, `x-amz-checksum-mode`
 * and the presigned-URL authentication parameters.
 */
import { type Target } from './addressing';

export type Op =
  | 'GetObject'
  | 'HeadObject'
  | 'PutObject'
  | 'CopyObject'
  | 'UploadPart'
  | 'CompleteMultipartUpload'
  | 'DeleteObject'
  | 'DeleteObjects'
  /** Any other change to an object (tagging, ACL, retention, multipart start/abort...): invalidate to be safe. */
  | 'ObjectWrite'
  /** Reads the cache does not answer, bucket and service operations. */
  | 'Forward';

/** Query parameters of presigned URLs; they authenticate, they do not select anything. */
export const PRESIGN_PARAMS = new Set([
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
  'X-Amz-Content-Sha256',
  'x-amz-user-agent',
]);

const HARMLESS = ['x-id', 'x-amz-checksum-mode'];

/** Parameters a cacheable read may carry: one set, so each parameter of a hit is looked up once. */
const CACHEABLE_PARAMS = new Set([...HARMLESS, ...PRESIGN_PARAMS]);

function hasParam(query: readonly (readonly [string, string])[], name: string): boolean {
  for (const [k] of query) if (k === name) return true;
  return false;
}

export function classify(method: string, t: Target, query: readonly (readonly [string, string])[], headers: ReadonlyMap<string, string>): Op {
  if (t.bucket === null) return 'Forward';
  // No set of names: a cacheable read (every hit) looks at each parameter once.
  if (t.key === null) return method === 'POST' && hasParam(query, 'delete') ? 'DeleteObjects' : 'Forward';
  let plain = true;
  // An indexed loop: no iterator and no destructuring per parameter on every hit.
  for (let i = 0; i < query.length; i++)
    if (!CACHEABLE_PARAMS.has(query[i]![0])) {
      plain = false;
      break;
    }
  switch (method) {
    case 'GET':
      return plain ? 'GetObject' : 'Forward';
    case 'HEAD':
      return plain ? 'HeadObject' : 'Forward';
    case 'PUT':
      if (hasParam(query, 'partNumber') && hasParam(query, 'uploadId')) return 'UploadPart';
      if (!plain) return 'ObjectWrite';
      return headers.has('x-amz-copy-source') ? 'CopyObject' : 'PutObject';
    case 'POST':
      if (hasParam(query, 'uploadId')) return 'CompleteMultipartUpload';
      return hasParam(query, 'uploads') ? 'Forward' : 'ObjectWrite';
    case 'DELETE':
      return hasParam(query, 'uploadId') ? 'Forward' : plain ? 'DeleteObject' : 'ObjectWrite';
    default:
      return 'Forward';
  }
}
