/**
 * The Confluent Schema Registry REST API over the registry's operations (docs/schema-registry.md
 * has the table). Paths and bodies are Confluent's; answers are
 * `application/vnd.schemaregistry.v1+json`, errors `{"error_code", "message"}` (error-codes.ts).
 * Authentication and scopes are checked before this handler (the node's auth guard).
 */
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../../program/http';
import { type SchemaInput, type SchemaRegistry, type SubjectVersion, type VersionSpec, parseVersionSpec } from '../registry';
import { type Outcome, SCHEMA_TYPES, type SchemaRecord, type SchemaReference, type SchemaType, refuse } from '../types';
import { ERROR_CODES, statusOf } from './error-codes';

export const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

type Reply = { status: number; body: unknown; raw?: false } | { status: number; body: string; raw: true };

function send(req: HttpRequest, res: HttpResponse, r: Reply): void {
  if (res.aborted) return;
  const body = r.raw === true ? r.body : JSON.stringify(r.body);
  res.send(r.status, [['content-type', CONTENT_TYPE]], req.method === 'HEAD' ? undefined : body);
}

const error = (code: number, message: string): Reply => ({ status: statusOf(code), body: { error_code: code, message } });

function answer<T>(o: Outcome<T>, shape: (v: T) => unknown = (v) => v): Reply {
  return o.ok ? { status: 200, body: shape(o.value) } : error(ERROR_CODES[o.kind], o.message);
}

/** The schema as served: `schemaType` and `references` only when they say something (Confluent leaves AVRO and none out). */
function schemaBody(s: { schemaType: SchemaType; schema: string; references: SchemaReference[] }): Record<string, unknown> {
  const out: Record<string, unknown> = { schema: s.schema };
  if (s.schemaType !== 'AVRO') out['schemaType'] = s.schemaType;
  if (s.references.length > 0) out['references'] = s.references;
  return out;
}

const versionBody = (v: SubjectVersion): Record<string, unknown> => ({ subject: v.subject, version: v.version, id: v.id, ...schemaBody(v) });
const recordBody = (s: SchemaRecord): Record<string, unknown> => schemaBody(s);

function flag(q: URLSearchParams, name: string): boolean {
  return (q.get(name) ?? '').toLowerCase() === 'true';
}

/** A register / lookup / compatibility body: `{schema, schemaType?, references?, id?, version?}`. */
function schemaInput(req: HttpRequest): Outcome<SchemaInput> {
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString('utf8'));
  } catch {
    return refuse('invalid_request', 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse('invalid_request', 'the body is a JSON object: {"schema": "…"}');
  const b = body as Record<string, unknown>;
  if (typeof b['schema'] !== 'string' || b['schema'].trim() === '') return refuse('invalid_schema', 'Empty schema');
  const type = b['schemaType'] === undefined || b['schemaType'] === null ? 'AVRO' : String(b['schemaType']).toUpperCase();
  if (!(SCHEMA_TYPES as readonly string[]).includes(type)) return refuse('invalid_schema', `Invalid schema type ${String(b['schemaType'])}; one of ${SCHEMA_TYPES.join(', ')}`);
  const refs = b['references'] ?? [];
  if (!Array.isArray(refs)) return refuse('invalid_schema', 'Invalid schema: references is an array of {name, subject, version}');
  const input: SchemaInput = { schema: b['schema'], schemaType: type as SchemaType, references: refs as SchemaReference[] };
  const id = b['id'];
  const version = b['version'];
  if (typeof id === 'number' && id > 0) input.id = id;
  if (typeof version === 'number' && version > 0) input.version = version;
  return { ok: true, value: input };
}

function jsonBody(req: HttpRequest): Record<string, unknown> | null {
  try {
    const v = JSON.parse(req.body.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function segments(path: string): string[] | null {
  try {
    return path
      .replace(/\/+$/, '')
      .split('/')
      .slice(1)
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

const NOT_FOUND = error(404, 'HTTP 404 Not Found');
const NOT_ALLOWED = error(405, 'HTTP 405 Method Not Allowed');

export function createRegistryHandler(registry: SchemaRegistry): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): Promise<void> =>
    route(registry, req).then(
      (r) => send(req, res, r),
      (err: unknown) => {
        // The metadata store did not answer in time or is stopping: Confluent's "error in the backend data store".
        if ((err as { code?: unknown } | null)?.code === 'storage_unavailable') return send(req, res, error(50001, (err as Error).message));
        throw err;
      },
    );
}

async function route(reg: SchemaRegistry, req: HttpRequest): Promise<Reply> {
  const seg = segments(req.path);
  if (seg === null) return error(400, 'the path is not valid percent-encoding');
  const q = new URLSearchParams(req.query);
  const m = req.method === 'HEAD' ? 'GET' : req.method;
  const [a, b, c, d, e] = seg;
  if (seg.length === 0 || (seg.length === 1 && a === '')) return m === 'GET' ? { status: 200, body: {} } : NOT_ALLOWED;
  switch (a) {
    case 'schemas':
      return schemas(reg, m, seg, q);
    case 'contexts':
      return seg.length === 1 && m === 'GET' ? { status: 200, body: ['.'] } : NOT_FOUND;
    case 'config':
    case 'mode':
      if (seg.length > 2) return NOT_FOUND;
      return settings(reg, a, m, b ?? null, q, req);
    case 'compatibility': {
      // /compatibility/subjects/{s}/versions[/{v}]
      if (b !== 'subjects' || c === undefined || d !== 'versions' || seg.length > 5) return NOT_FOUND;
      if (m !== 'POST') return NOT_ALLOWED;
      let spec: VersionSpec | null = null;
      if (e !== undefined) {
        const v = parseVersionSpec(e);
        if (!v.ok) return answer(v);
        spec = v.value;
      }
      const input = schemaInput(req);
      if (!input.ok) return answer(input);
      const problems = await reg.testCompatibility(c, spec, input.value);
      return answer(problems, (p) => (flag(q, 'verbose') ? { is_compatible: p.length === 0, messages: p } : { is_compatible: p.length === 0 }));
    }
    case 'subjects':
      return subjects(reg, m, seg.slice(1), q, req);
    default:
      return NOT_FOUND;
  }
}

async function schemas(reg: SchemaRegistry, m: string, seg: string[], q: URLSearchParams): Promise<Reply> {
  if (m !== 'GET') return NOT_ALLOWED;
  const [, b, c, d] = seg;
  if (seg.length === 2 && b === 'types') return { status: 200, body: [...SCHEMA_TYPES] };
  if (seg.length === 1) {
    // Every subject's versions (latestOnly: the newest of each).
    const prefix = q.get('subjectPrefix') ?? '';
    const deleted = flag(q, 'deleted');
    const out: unknown[] = [];
    for (const s of await reg.subjects({ deleted, prefix })) {
      const vs = await reg.versions(s, deleted);
      if (!vs.ok) continue;
      for (const n of flag(q, 'latestOnly') ? vs.value.slice(-1) : vs.value) {
        const v = await reg.version(s, n, deleted);
        if (v.ok) out.push(versionBody(v.value));
      }
    }
    return { status: 200, body: out };
  }
  if (b !== 'ids' || c === undefined || seg.length > 4) return NOT_FOUND;
  const id = /^[0-9]{1,10}$/.test(c) ? Number(c) : NaN;
  if (!Number.isSafeInteger(id)) return error(40403, `Schema ${c} not found`);
  if (d === undefined) return answer(await reg.schemaById(id), recordBody);
  if (d === 'schema') {
    const s = await reg.schemaById(id);
    return s.ok ? { status: 200, body: s.value.schema, raw: true } : answer(s);
  }
  if (d === 'subjects') return answer(await reg.idVersions(id, flag(q, 'deleted')), (vs) => [...new Set(vs.map((v) => v.subject))]);
  if (d === 'versions') return answer(await reg.idVersions(id, flag(q, 'deleted')));
  return NOT_FOUND;
}

async function subjects(reg: SchemaRegistry, m: string, rest: string[], q: URLSearchParams, req: HttpRequest): Promise<Reply> {
  const [subject, b, c, d] = rest;
  if (subject === undefined) {
    if (m !== 'GET') return NOT_ALLOWED;
    return { status: 200, body: await reg.subjects({ deleted: flag(q, 'deleted'), prefix: q.get('subjectPrefix') ?? '' }) };
  }
  if (b === undefined) {
    if (m === 'POST') {
      const input = schemaInput(req);
      if (!input.ok) return answer(input);
      return answer(await reg.lookup(subject, input.value, flag(q, 'normalize'), flag(q, 'deleted')), versionBody);
    }
    if (m === 'DELETE') return answer(await reg.deleteSubject(subject, flag(q, 'permanent')));
    return NOT_ALLOWED;
  }
  if (b !== 'versions' || rest.length > 4) return NOT_FOUND;
  if (c === undefined) {
    if (m === 'GET') return answer(await reg.versions(subject, flag(q, 'deleted')));
    if (m !== 'POST') return NOT_ALLOWED;
    const input = schemaInput(req);
    if (!input.ok) return answer(input);
    return answer(await reg.register(subject, input.value, flag(q, 'normalize')), (r) => ({ id: r.id }));
  }
  const spec = parseVersionSpec(c);
  if (!spec.ok) return answer(spec);
  if (d === undefined) {
    if (m === 'GET') return answer(await reg.version(subject, spec.value, flag(q, 'deleted')), versionBody);
    if (m === 'DELETE') return answer(await reg.deleteVersion(subject, spec.value, flag(q, 'permanent')));
    return NOT_ALLOWED;
  }
  if (m !== 'GET') return NOT_ALLOWED;
  if (d === 'schema') {
    const v = await reg.version(subject, spec.value, flag(q, 'deleted'));
    return v.ok ? { status: 200, body: v.value.schema, raw: true } : answer(v);
  }
  if (d === 'referencedby') return answer(await reg.referencedBy(subject, spec.value));
  return NOT_FOUND;
}

/** /config[/{s}] and /mode[/{s}]. */
async function settings(reg: SchemaRegistry, what: 'config' | 'mode', m: string, subject: string | null, q: URLSearchParams, req: HttpRequest): Promise<Reply> {
  const config = what === 'config';
  if (m === 'GET') {
    const defaultToGlobal = flag(q, 'defaultToGlobal');
    return config ? answer(await reg.compatibility(subject, defaultToGlobal), (l) => ({ compatibilityLevel: l })) : answer(await reg.mode(subject, defaultToGlobal), (v) => ({ mode: v }));
  }
  if (m === 'PUT') {
    const body = jsonBody(req);
    if (body === null) return error(400, 'the body is a JSON object');
    return config ? answer(await reg.setCompatibility(subject, body['compatibility']), (l) => ({ compatibility: l })) : answer(await reg.setMode(subject, body['mode'], flag(q, 'force')), (v) => ({ mode: v }));
  }
  if (m === 'DELETE') return config ? answer(await reg.deleteCompatibility(subject), (l) => ({ compatibilityLevel: l })) : answer(await reg.deleteMode(subject), (v) => ({ mode: v }));
  return NOT_ALLOWED;
}
