/**
 * Small shared helpers for the black-box protocol suite (spec/stream-service.md): start one
 * real node per engine per file, send requests over real HTTP with undici, and hand back
 * responses whose bodies are already read. Paths are sent exactly as given (undici does not
 * normalise them), so `/a/../b` reaches the server raw.
 */
import { Agent, type Dispatcher } from 'undici';
import {
  type DecodedRecord,
  type RecordInput,
  RecordBatchError,
  decodeRecords,
  encodeRecordBatch,
  splitBatches,
} from '../../src/util/record-batch';
import { type NodeProcess, startNode } from '../helpers/node-process';

/** Every suite runs against both HTTP engines (the node engine alone where uWS does not load: helpers/engines.ts). */
import { type Engine } from '../helpers/engines';
export { ENGINES, type Engine } from '../helpers/engines';

export const JSON_BATCH = 'application/vnd.svc.batch+json';
export const BINARY_BATCH = 'application/vnd.svc.batch';

export type Body = string | Uint8Array;
export type Query = Record<string, string | number>;

export interface RequestInit {
  headers?: Record<string, string>;
  body?: Body;
}

export interface Res {
  status: number;
  /** Lower-case header name → value (repeats joined with `, `). */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** A header's value, or undefined. */
  header(name: string): string | undefined;
  /** The body parsed as JSON. */
  json<T = unknown>(): T;
}

/** A record of the JSON read format. */
export interface JsonRecord {
  seq: number;
  timestamp: number;
  key?: string;
  key_b64?: string;
  headers?: Record<string, string | null>;
  headers_b64?: Record<string, string | null>;
  body?: string;
  body_b64?: string;
}

export interface ListEntry {
  name: string;
  content_type: string;
  start_seq: number;
  next_seq: number;
  closed: boolean;
  ttl: number | null;
  expires_at: string | null;
}

export interface ListPage {
  streams: ListEntry[];
  has_more: boolean;
}

export interface Svc {
  readonly engine: Engine;
  /** Base URL of the protocol listener, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** A stream name no other test uses: `/t<n>-<label>-<random>`. */
  name(label?: string): string;
  request(method: Dispatcher.HttpMethod, path: string, init?: RequestInit): Promise<Res>;
  put(path: string, init?: RequestInit): Promise<Res>;
  post(path: string, init?: RequestInit): Promise<Res>;
  get(path: string, query?: Query | string, headers?: Record<string, string>): Promise<Res>;
  head(path: string): Promise<Res>;
  del(path: string): Promise<Res>;
  list(query?: Query): Promise<Res>;
  /** GET and parse a JSON read. */
  read(path: string, query?: Query): Promise<{ res: Res; records: JsonRecord[] }>;
  /** The stream's Svc-Next-Seq from HEAD (throws when the HEAD is not 200). */
  nextSeq(path: string): Promise<number>;
}

let counter = 0;

/** A label reduced to characters that need no percent-encoding in a path. */
function slug(label: string): string {
  return label.replace(/[^A-Za-z0-9-]+/g, '-').slice(0, 40);
}

function queryString(q: Query | string | undefined): string {
  if (q === undefined) return '';
  if (typeof q === 'string') return q === '' ? '' : `?${q}`;
  const s = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return s === '' ? '' : `?${s}`;
}

function toRes(status: number, raw: Record<string, string | string[] | undefined>, body: Buffer): Res {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  const text = body.toString('utf8');
  return {
    status,
    headers,
    body,
    text,
    header: (name) => headers[name.toLowerCase()],
    json: () => JSON.parse(text),
  };
}

/**
 * Start one node for `engine` before the enclosing describe's tests and stop it after them.
 * The returned client reads the node's address lazily, so it can be created at describe time.
 */
export function useNode(engine: Engine, args: string[] = []): Svc {
  let node: NodeProcess | null = null;
  let agent: Agent | null = null;

  beforeAll(async () => {
    node = await startNode({ engine, args });
    agent = new Agent({ connections: 64, keepAliveTimeout: 2000 });
  });
  afterAll(async () => {
    await agent?.close();
    await node?.stop();
  });

  const origin = (): string => {
    if (node === null) throw new Error('the node has not started (beforeAll failed?)');
    return node.url;
  };

  const svc: Svc = {
    engine,
    get url() {
      return origin();
    },
    name(label = 's') {
      counter++;
      return `/t${counter}-${slug(label)}-${Math.random().toString(36).slice(2, 8)}`;
    },
    async request(method, path, init = {}) {
      const body = init.body === undefined ? undefined : typeof init.body === 'string' ? Buffer.from(init.body) : init.body;
      const r = await agent!.request({ origin: origin(), path, method, headers: init.headers ?? {}, body: body ?? null });
      const buf = Buffer.from(await r.body.arrayBuffer());
      return toRes(r.statusCode, r.headers, buf);
    },
    put: (path, init) => svc.request('PUT', path, init),
    post: (path, init) => svc.request('POST', path, init),
    get: (path, query, headers) => svc.request('GET', path + queryString(query), headers === undefined ? {} : { headers }),
    head: (path) => svc.request('HEAD', path),
    del: (path) => svc.request('DELETE', path),
    list: (query) => svc.request('GET', '/' + queryString(query)),
    async read(path, query) {
      const res = await svc.get(path, query);
      if (res.status !== 200) throw new Error(`GET ${path}${queryString(query)}: ${res.status} ${res.text}`);
      return { res, records: res.json<JsonRecord[]>() };
    },
    async nextSeq(path) {
      const res = await svc.head(path);
      if (res.status !== 200) throw new Error(`HEAD ${path}: ${res.status}`);
      return Number(res.header('svc-next-seq'));
    },
  };
  return svc;
}

/**
 * The protocol listener's error shape (spec "Error body"): status, `application/json`, and a
 * body with a string `error`, optional string `message`, optional integer `next_seq`, nothing else.
 */
export function expectError(res: Res, status: number, error?: string): { error: string; message?: string; next_seq?: number } {
  expect({ status: res.status, body: res.text }).toEqual({ status, body: expect.any(String) });
  expect(res.header('content-type')).toMatch(/^application\/json\b/);
  const body = res.json<Record<string, unknown>>();
  expect(typeof body['error']).toBe('string');
  for (const k of Object.keys(body)) expect(['error', 'message', 'next_seq']).toContain(k);
  if ('message' in body) expect(typeof body['message']).toBe('string');
  if ('next_seq' in body) expect(Number.isSafeInteger(body['next_seq'])).toBe(true);
  if (error !== undefined) expect(body['error']).toBe(error);
  return body as { error: string; message?: string; next_seq?: number };
}

/** Create a stream (expects 201) and append `bodies` as single records; returns the name. */
export async function createWith(svc: Svc, name: string, bodies: Body[] = [], contentType = 'text/plain'): Promise<string> {
  const c = await svc.put(name, { headers: { 'content-type': contentType } });
  if (c.status !== 201) throw new Error(`PUT ${name}: ${c.status} ${c.text}`);
  for (const body of bodies) {
    const r = await svc.post(name, { headers: { 'content-type': contentType }, body });
    if (r.status !== 200) throw new Error(`POST ${name}: ${r.status} ${r.text}`);
  }
  return name;
}

/** A JSON batch body. */
export function jsonBatch(records: unknown[]): RequestInit {
  return { headers: { 'content-type': JSON_BATCH }, body: JSON.stringify({ records }) };
}

/** One binary batch (`application/vnd.svc.batch`) holding `records`; offsets start at 0, the server rewrites them. */
export function binaryBatch(records: RecordInput[], baseTimestamp = Date.now()): Buffer {
  return Buffer.from(encodeRecordBatch({ baseOffset: 0, baseTimestamp, records }));
}

/** Every record of a `format=binary` read body (validated: framing and CRC). */
export function decodeBinary(body: Buffer): DecodedRecord[] {
  const batches = splitBatches(body);
  if (batches instanceof RecordBatchError) throw batches;
  return batches.flatMap((b) => decodeRecords(b));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
