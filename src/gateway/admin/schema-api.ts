/**
 * The schema registry on the admin listener (docs/schema-registry.md, "Admin API"): the operators'
 * view of subjects, versions, compatibility and the streams bound to them, for `svc schema …` and
 * the dashboard's Schemas page. The same records as the registry listener's (Confluent REST API);
 * answers and errors in the admin shape (`{"error": "<code>"}`, plus a `message` where the
 * registry gives one an operator needs: an incompatible or invalid schema).
 *
 *   GET    /admin/schemas                              {compatibilityLevel, mode, subjects: [{subject, versions, latest, compatibilityLevel, streams}]}
 *   GET    /admin/schemas/{subject}?deleted=           {subject, compatibilityLevel, versions: [{version, id, schemaType, schema, references, deleted}], streams}
 *   GET    /admin/schemas/{subject}/versions/{v}        one version ({v}: a number or latest)
 *   POST   /admin/schemas/{subject}/versions            {schema, schemaType?, references?} → {id, version}
 *   POST   /admin/schemas/{subject}/compatibility       {schema, schemaType?, references?, version?} → {compatible, messages}
 *   PUT    /admin/schemas/{subject}/config              {compatibility} → {compatibilityLevel}
 *   DELETE /admin/schemas/{subject}?permanent=          versions deleted
 *   DELETE /admin/schemas/{subject}/versions/{v}?permanent=
 *
 * "Streams" are the streams bound (`Svc-Schema`) to the stream schema a subject `svc-<name>` is
 * (docs/schema-registry.md, "Stream schemas"), among this node's streams.
 */
import { SvcError } from '../../errors';
import { type HttpRequest } from '../http/engine';
import { type Reply } from '../kit';
import { parseBody } from './json-body';

type SchemaType = 'AVRO' | 'JSON' | 'PROTOBUF';
interface Reference {
  name: string;
  subject: string;
  version: number;
}
type Outcome<T> = { ok: true; value: T } | { ok: false; kind: string; message: string };
interface SubjectVersion {
  subject: string;
  id: number;
  version: number;
  schemaType: SchemaType;
  schema: string;
  references: Reference[];
}

/** What the admin API asks of the registry (src/registry SchemaRegistry, passed in by src/node.ts). */
export interface SchemaAdminRegistry {
  subjects(opts: { deleted: boolean; prefix: string }): Promise<string[]>;
  versions(subject: string, deleted: boolean): Promise<Outcome<number[]>>;
  version(subject: string, spec: number | 'latest', deleted: boolean): Promise<Outcome<SubjectVersion>>;
  register(subject: string, input: { schema: string; schemaType: SchemaType; references: Reference[] }, normalize: boolean): Promise<Outcome<{ id: number; version: number }>>;
  testCompatibility(subject: string, spec: number | 'latest' | null, input: { schema: string; schemaType: SchemaType; references: Reference[] }): Promise<Outcome<string[]>>;
  deleteSubject(subject: string, permanent: boolean): Promise<Outcome<number[]>>;
  deleteVersion(subject: string, spec: number | 'latest', permanent: boolean): Promise<Outcome<number>>;
  effectiveCompatibility(subject: string | null): string;
  effectiveMode(subject: string | null): string;
  setCompatibility(subject: string | null, level: unknown): Promise<Outcome<string>>;
}

export interface SchemaAdminDeps {
  registry: SchemaAdminRegistry;
  /** This node's streams bound to a stream schema. */
  bindings(): Promise<Array<{ stream: string; schema: string }>>;
  /** The subject of stream schema `name` (`svc-<name>`). */
  subjectOf(name: string): string;
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];
const PREFIX = '/admin/schemas';

function json(status: number, doc: unknown): Reply {
  return { status, headers: [JSON_TYPE, ['cache-control', 'no-store']], body: JSON.stringify(doc) };
}

/** A refusal in the admin shape, with the registry's message (what an operator fixes). */
function refused(r: { kind: string; message: string }): Reply {
  const status = r.kind.endsWith('not_found') || r.kind.endsWith('soft_deleted') || r.kind.endsWith('not_configured') ? 404 : r.kind === 'store_unavailable' ? 503 : r.kind.startsWith('invalid_') ? 400 : 409;
  const error = status === 404 ? 'not_found' : status === 503 ? 'storage_unavailable' : status === 400 ? 'bad_request' : 'conflict';
  return { status, headers: [JSON_TYPE], body: JSON.stringify({ error, message: r.message }) };
}

/** `{schema, schemaType?, references?}`: the schema as text, or (JSON, AVRO) as a JSON value. */
function schemaInput(b: Record<string, unknown>): { schema: string; schemaType: SchemaType; references: Reference[] } {
  const t = b['schemaType'] ?? 'AVRO';
  if (t !== 'AVRO' && t !== 'JSON' && t !== 'PROTOBUF') throw new SvcError('bad_request', 'schemaType is AVRO, JSON or PROTOBUF');
  const s = b['schema'];
  if (s === undefined) throw new SvcError('bad_request', 'schema: required');
  const refs = b['references'] ?? [];
  const isRef = (r: unknown): boolean => {
    const o = r as Record<string, unknown> | null;
    return typeof o === 'object' && o !== null && typeof o['name'] === 'string' && typeof o['subject'] === 'string' && Number.isSafeInteger(o['version']);
  };
  if (!Array.isArray(refs) || !refs.every(isRef)) throw new SvcError('bad_request', 'references: an array of {name, subject, version}');
  return { schema: typeof s === 'string' ? s : JSON.stringify(s), schemaType: t, references: refs as Reference[] };
}

function versionSpec(text: string): number | 'latest' {
  if (text === 'latest' || text === '-1') return 'latest';
  if (!/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > 2 ** 31 - 1) throw new SvcError('bad_request', `version ${text}: a number from 1, or latest`);
  return Number(text);
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new SvcError('bad_request', 'the subject is not valid percent-encoded UTF-8');
  }
}

/** Streams bound to each subject's stream schema: subject → stream names, sorted. */
async function streamsBySubject(d: SchemaAdminDeps): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const b of await d.bindings()) {
    const subject = d.subjectOf(b.schema);
    out.set(subject, [...(out.get(subject) ?? []), b.stream].sort());
  }
  return out;
}

/** Answers a `/admin/schemas…` request, or null when the path is not this API's. */
export async function schemaApi(d: SchemaAdminDeps | null | undefined, req: HttpRequest): Promise<Reply | null> {
  const p = req.path;
  if (p !== PREFIX && !p.startsWith(PREFIX + '/')) return null;
  if (d === null || d === undefined) throw new SvcError('not_found', 'this node has no schema registry');
  const m = req.method;
  const get = m === 'GET' || m === 'HEAD';
  const q = new URLSearchParams(req.query);
  const flag = (name: string): boolean => q.get(name) === 'true';
  const r = d.registry;
  if (p === PREFIX) {
    if (!get) throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const streams = await streamsBySubject(d);
    const subjects = [];
    for (const subject of await r.subjects({ deleted: false, prefix: q.get('prefix') ?? '' })) {
      const versions = await r.versions(subject, false);
      const latest = await r.version(subject, 'latest', false);
      if (!versions.ok || !latest.ok) continue;
      subjects.push({
        subject,
        versions: versions.value,
        latest: { version: latest.value.version, id: latest.value.id, schemaType: latest.value.schemaType },
        compatibilityLevel: r.effectiveCompatibility(subject),
        streams: streams.get(subject) ?? [],
      });
    }
    return json(200, { compatibilityLevel: r.effectiveCompatibility(null), mode: r.effectiveMode(null), subjects });
  }
  const rest = p.slice(PREFIX.length + 1);
  const [rawSubject, ...tail] = rest.split('/');
  const subject = decode(rawSubject!);
  if (subject === '') throw new SvcError('bad_request', 'a subject is required');
  const what = tail.join('/');
  if (what === '') {
    if (get) {
      const deleted = flag('deleted');
      const versions = await r.versions(subject, deleted);
      if (!versions.ok) return refused(versions);
      const docs = [];
      const live = await r.versions(subject, false);
      for (const v of versions.value) {
        const one = await r.version(subject, v, true);
        if (!one.ok) continue;
        const { version, id, schemaType, schema, references } = one.value;
        docs.push({ version, id, schemaType, schema, references, deleted: !live.ok || !live.value.includes(v) });
      }
      return json(200, { subject, compatibilityLevel: r.effectiveCompatibility(subject), versions: docs, streams: (await streamsBySubject(d)).get(subject) ?? [] });
    }
    if (m !== 'DELETE') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const out = await r.deleteSubject(subject, flag('permanent'));
    return out.ok ? json(200, { subject, versions: out.value, permanent: flag('permanent') }) : refused(out);
  }
  const v = /^versions\/([^/]+)$/.exec(what);
  if (v !== null) {
    const spec = versionSpec(v[1]!);
    if (get) {
      const out = await r.version(subject, spec, flag('deleted'));
      return out.ok ? json(200, out.value) : refused(out);
    }
    if (m !== 'DELETE') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const out = await r.deleteVersion(subject, spec, flag('permanent'));
    return out.ok ? json(200, { subject, version: out.value, permanent: flag('permanent') }) : refused(out);
  }
  if (what === 'versions') {
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const out = await r.register(subject, schemaInput(parseBody(req)), flag('normalize'));
    return out.ok ? json(200, { subject, ...out.value }) : refused(out);
  }
  if (what === 'compatibility') {
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const b = parseBody(req);
    const spec = b['version'] === undefined ? null : versionSpec(String(b['version']));
    const out = await r.testCompatibility(subject, spec, schemaInput(b));
    if (!out.ok) return out.kind === 'subject_not_found' && spec === null ? json(200, { subject, compatible: true, messages: [] }) : refused(out);
    return json(200, { subject, compatible: out.value.length === 0, messages: out.value, compatibilityLevel: r.effectiveCompatibility(subject) });
  }
  if (what === 'config') {
    if (get) return json(200, { subject, compatibilityLevel: r.effectiveCompatibility(subject) });
    if (m !== 'PUT') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const out = await r.setCompatibility(subject, parseBody(req)['compatibility']);
    return out.ok ? json(200, { subject, compatibilityLevel: out.value }) : refused(out);
  }
  throw new SvcError('not_found', `no ${p}`);
}
