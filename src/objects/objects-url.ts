/**
 * `--objects` URLs (docs/objects.md, "Object stores"):
 *
 *   file:<dir>                      a directory every node shares (absolute, relative to the
 *                                   working directory, or file:///abs/dir)
 *   s3://<bucket>[/<prefix>][?endpoint=http(s)://host[:port]][&region=<region>][&style=path|virtual]
 *
 * Credentials never go in the URL (they come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN), so the URL can be logged and shown as it is.
 */
import * as path from 'node:path';
import { keyProblem } from './object-store';

export interface FileLocation {
  kind: 'file';
  /** Absolute directory. */
  dir: string;
}

export interface S3Location {
  kind: 's3';
  bucket: string;
  /** Key prefix without leading or trailing `/` ('' for the bucket's root). */
  prefix: string;
  /** The S3 endpoint (scheme, host, port, optional base path); AWS's regional endpoint by default. */
  endpoint: URL;
  region: string;
  /** Path style (`endpoint/bucket/key`), the default with an explicit endpoint, or virtual-hosted (`bucket.endpoint/key`), AWS's. */
  style: 'path' | 'virtual';
}

export type ObjectsLocation = FileLocation | S3Location;

/** A `--objects` value that cannot be used; the message says why and shows the forms. */
export class ObjectsUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ObjectsUrlError';
  }
}

export const OBJECTS_URL_FORMS = 'file:<dir> or s3://<bucket>/<prefix>?endpoint=http://host:port&region=us-east-1';

const S3_PARAMS = new Set(['endpoint', 'region', 'style']);
/** S3's bucket naming rules, the parts that matter for addressing: 3-63 of a-z 0-9 . -, starting and ending with a letter or digit. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,64}$/;

function fail(text: string, why: string): never {
  throw new ObjectsUrlError(`objects URL ${JSON.stringify(text)}: ${why} (forms: ${OBJECTS_URL_FORMS})`);
}

/** Parses and validates an objects URL; throws ObjectsUrlError with a readable reason. */
export function parseObjectsUrl(text: string, cwd = process.cwd()): ObjectsLocation {
  if (typeof text !== 'string' || text.trim() === '') fail(String(text), 'empty');
  if (text.startsWith('file:')) return parseFile(text, cwd);
  if (text.startsWith('s3://')) return parseS3(text);
  fail(text, 'unknown scheme');
}

function parseFile(text: string, cwd: string): FileLocation {
  let rest = text.slice('file:'.length);
  if (rest.startsWith('//')) {
    // file://<host>/<path>: only an empty host or localhost names this machine.
    const slash = rest.indexOf('/', 2);
    const host = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    if (host !== '' && host !== 'localhost') fail(text, `a file URL names this machine's directories; host ${JSON.stringify(host)} is not allowed`);
    rest = slash < 0 ? '' : rest.slice(slash);
    try {
      rest = decodeURIComponent(rest);
    } catch {
      fail(text, 'malformed percent-escape in the path');
    }
  }
  if (rest === '') fail(text, 'no directory given');
  if (rest.includes('\0')) fail(text, 'the path holds a NUL character');
  return { kind: 'file', dir: path.resolve(cwd, rest) };
}

function parseS3(text: string): S3Location {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(text, 'not a URL');
  }
  if (url.username !== '' || url.password !== '') fail(text, 'credentials do not go in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (url.hash !== '') fail(text, 'a #fragment is not allowed');
  if (url.port !== '') fail(text, 'the bucket has no port; give the store\'s address as ?endpoint=http://host:port');
  const bucket = url.hostname;
  if (bucket === '') fail(text, 'no bucket given');
  if (!BUCKET.test(bucket) || bucket.includes('..')) fail(text, `bucket ${JSON.stringify(bucket)} is not a valid S3 bucket name (3-63 of a-z 0-9 . -)`);
  // The raw path, not url.pathname: the URL parser would quietly resolve `a/../b` to `b`.
  const afterBucket = text.slice('s3://'.length).split(/[?#]/)[0]!;
  const rawPath = afterBucket.includes('/') ? afterBucket.slice(afterBucket.indexOf('/')) : '';
  let prefix: string;
  try {
    prefix = decodeURIComponent(rawPath).replace(/^\/+|\/+$/g, '');
  } catch {
    fail(text, 'malformed percent-escape in the prefix');
  }
  if (prefix !== '') {
    const problem = keyProblem(prefix, 'prefix');
    if (problem !== null) fail(text, problem);
  }
  for (const name of url.searchParams.keys()) {
    if (!S3_PARAMS.has(name)) fail(text, `unknown parameter ${JSON.stringify(name)} (known: endpoint, region, style)`);
  }
  for (const name of S3_PARAMS) if (url.searchParams.getAll(name).length > 1) fail(text, `parameter ${name} given twice`);
  const region = url.searchParams.get('region') ?? 'us-east-1';
  if (!REGION.test(region)) fail(text, `region ${JSON.stringify(region)} is not a region name`);
  const endpointText = url.searchParams.get('endpoint');
  let endpoint: URL;
  if (endpointText === null) endpoint = new URL(`https://s3.${region}.amazonaws.com`);
  else {
    try {
      endpoint = new URL(endpointText);
    } catch {
      fail(text, `endpoint ${JSON.stringify(endpointText)} is not a URL (http://host:port)`);
    }
    if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') fail(text, `endpoint ${JSON.stringify(endpointText)} must be http:// or https://`);
    if (endpoint.username !== '' || endpoint.password !== '') fail(text, 'credentials do not go in the endpoint; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    if (endpoint.search !== '' || endpoint.hash !== '') fail(text, `endpoint ${JSON.stringify(endpointText)} may not have a query or fragment`);
  }
  const style = url.searchParams.get('style') ?? (endpointText === null ? 'virtual' : 'path');
  if (style !== 'path' && style !== 'virtual') fail(text, `style must be path or virtual (got ${JSON.stringify(style)})`);
  if (style === 'virtual' && bucket.includes('.') && endpoint.protocol === 'https:') fail(text, 'a bucket name with dots cannot be addressed virtual-hosted over TLS; add &style=path');
  return { kind: 's3', bucket, prefix, endpoint, region, style };
}

/** Why `text` is not a usable objects URL, or null. For config validation. */
export function objectsUrlProblem(text: string): string | null {
  try {
    parseObjectsUrl(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The location as a URL again, normalised (what `describe` shows: no credentials ever). */
export function describeObjectsLocation(loc: ObjectsLocation): string {
  if (loc.kind === 'file') return `file:${loc.dir}`;
  const endpoint = loc.endpoint.href.replace(/\/$/, '');
  return `s3://${loc.bucket}/${loc.prefix}?endpoint=${endpoint}&region=${loc.region}&style=${loc.style}`;
}
