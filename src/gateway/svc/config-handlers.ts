/**
 * Stream config (docs/protocol.md "Stream config"): the create headers Svc-Schema,
 * Svc-Schema-Validate, Svc-Kafka-Topic and Svc-Durability, and the config document
 *
 *   GET   /_streams/{name}   {name, contentType, createdAtMs, ttlSeconds, expiresAtMs, closed,
 *                             schema, schemaValidate, kafkaTopic, kafkaTopicDerived,
 *                             durability, durabilityDefault}
 *                             registryValidation (schema validation against the Confluent-compatible
 *                             registry: util/validation-rule.ts; kept in the metadata store)
 *   PATCH /_streams/{name}   JSON merge patch (RFC 7396) of schema, schemaValidate, kafkaTopic, ttlSeconds, durability,
 *                             registryValidation
 *
 * `{name}` is the rest of the path: /_streams/orders/eu is the stream /orders/eu.
 */
import { SvcError } from '../../errors';
import { type Durability, type StreamInfo, checkSchemaName, mediaType } from '../../shards';
import { deriveKafkaTopic, isValidKafkaTopic } from '../../util/kafka-topic';
import { type ValidationChange, parseStrategy, strategyClass } from '../../util/validation-rule';
import { type HttpRequest } from '../http/engine';
import { type SvcContext } from './context';
import { type Reply, parseBool, parseDurability, parseQuery, parseStreamName } from '../kit';

export const STREAMS_PATH = '/_streams';

/** The config fields a create takes from its headers. */
export interface CreateConfig {
  schema: string | null;
  schemaValidate: boolean;
  kafkaTopic: string | null;
  durability: Durability | null;
}

/**
 * Svc-Schema (a registered schema), Svc-Schema-Validate (`true` needs Svc-Schema) and
 * Svc-Kafka-Topic (Kafka's topic rules). Checked on every create, also one that finds the
 * stream existing (and then changes nothing).
 */
export function parseCreateConfig(ctx: SvcContext, h: Readonly<Record<string, string>>): CreateConfig {
  const schema = h['svc-schema'] ?? null;
  if (schema !== null) checkRegistered(ctx, 'Svc-Schema', schema);
  const schemaValidate = parseBool('Svc-Schema-Validate', h['svc-schema-validate']) ?? false;
  if (schemaValidate && schema === null) throw new SvcError('invalid_parameter', 'Svc-Schema-Validate: true needs Svc-Schema');
  const kafkaTopic = h['svc-kafka-topic'] ?? null;
  if (kafkaTopic !== null) checkTopic('Svc-Kafka-Topic', kafkaTopic);
  const durability = parseDurability('Svc-Durability', h['svc-durability']) ?? null;
  return { schema, schemaValidate, kafkaTopic, durability };
}

/** `/_streams/{name}`. */
export async function routeStreamConfig(ctx: SvcContext, req: HttpRequest): Promise<Reply> {
  const rest = req.path.slice(STREAMS_PATH.length);
  if (rest === '' || rest === '/') throw new SvcError('invalid_stream_name', `${STREAMS_PATH}/{name} needs a stream name, such as ${STREAMS_PATH}/orders`);
  const name = parseStreamName(rest, ctx.limits.maxStreamNameBytes);
  if (parseQuery(req.query).size > 0) throw new SvcError('invalid_parameter', 'the stream config endpoint takes no query parameters');
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return configReply(ctx, await ctx.shards.head(name));
    case 'PATCH': {
      const { registryValidation, ...patch } = parsePatch(ctx, req);
      const info = Object.keys(patch).length === 0 ? await ctx.shards.head(name) : await ctx.shards.configure({ name, ...patch });
      if (registryValidation !== undefined) {
        if (ctx.validation === null || ctx.validation === undefined) throw new SvcError('invalid_parameter', 'registryValidation: schema validation is not available on this node');
        await ctx.validation.change([name], info.kafkaTopic ?? deriveKafkaTopic(name), registryValidation);
      }
      return configReply(ctx, info);
    }
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a stream config`, { 'header:allow': 'GET, HEAD, PATCH' });
  }
}

/** The stream config document. */
export function configDocument(s: StreamInfo): object {
  return {
    name: s.name,
    contentType: s.contentType,
    createdAtMs: s.createdAtMs,
    ttlSeconds: s.ttlSeconds,
    expiresAtMs: s.expiresAtMs,
    closed: s.closed,
    schema: s.schema,
    schemaValidate: s.schemaValidate,
    kafkaTopic: s.kafkaTopic ?? deriveKafkaTopic(s.name),
    kafkaTopicDerived: s.kafkaTopic === null,
    durability: s.durability,
    durabilityDefault: s.durabilityDefault,
  };
}

/** The stream's registry validation rule as the config document shows it, or null. */
function validationDocument(ctx: SvcContext, name: string): object | null {
  const r = ctx.validation?.rule(name) ?? null;
  if (r === null) return null;
  return { value: r.value, key: r.key, valueSubjectNameStrategy: strategyClass(r.valueStrategy), keySubjectNameStrategy: strategyClass(r.keyStrategy), deadLetter: r.deadLetter };
}

function configReply(ctx: SvcContext, s: StreamInfo): Reply {
  return {
    status: 200,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'no-store'],
    ],
    body: JSON.stringify({ ...configDocument(s), registryValidation: validationDocument(ctx, s.name) }),
  };
}

const PATCHABLE: ReadonlySet<string> = new Set(['schema', 'schemaValidate', 'kafkaTopic', 'ttlSeconds', 'durability', 'registryValidation']);
const PATCH_TYPES: ReadonlySet<string> = new Set(['application/merge-patch+json', 'application/json']);

interface ConfigPatch {
  schema?: string | null;
  schemaValidate?: boolean;
  kafkaTopic?: string | null;
  ttlSeconds?: number | null;
  durability?: Durability | null;
  registryValidation?: ValidationChange;
}

/** `registryValidation` of a patch: an object merged member by member (null: the default), or null (all defaults: off). */
function parseValidationPatch(v: unknown): ValidationChange {
  if (v === null) return { value: null, key: null, valueStrategy: null, keyStrategy: null, deadLetter: null };
  if (typeof v !== 'object' || Array.isArray(v)) throw new SvcError('invalid_parameter', 'registryValidation: must be an object such as {"value": true}, or null');
  const d = v as Record<string, unknown>;
  const known = ['value', 'key', 'valueSubjectNameStrategy', 'keySubjectNameStrategy', 'deadLetter'];
  const unknown = Object.keys(d).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new SvcError('invalid_parameter', `registryValidation: ${unknown.join(', ')} unknown (it takes ${known.join(', ')})`);
  const out: ValidationChange = {};
  const bool = (k: 'value' | 'key'): void => {
    if (!(k in d)) return;
    const x = d[k];
    if (x !== null && typeof x !== 'boolean') throw new SvcError('invalid_parameter', `registryValidation.${k}: must be true, false or null`);
    out[k] = x;
  };
  bool('value');
  bool('key');
  const strategy = (k: 'valueSubjectNameStrategy' | 'keySubjectNameStrategy', into: 'valueStrategy' | 'keyStrategy'): void => {
    if (!(k in d)) return;
    const x = d[k];
    const s = x === null ? null : typeof x === 'string' ? parseStrategy(x) : undefined;
    if (s === undefined || (s === null && x !== null)) throw new SvcError('invalid_parameter', `registryValidation.${k}: TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy (or their full class names), or null`);
    out[into] = s;
  };
  strategy('valueSubjectNameStrategy', 'valueStrategy');
  strategy('keySubjectNameStrategy', 'keyStrategy');
  if ('deadLetter' in d) {
    const x = d['deadLetter'];
    if (x !== null && (typeof x !== 'string' || !x.startsWith('/') || x.length < 2)) throw new SvcError('invalid_parameter', 'registryValidation.deadLetter: a stream name (starting with /) or null');
    out.deadLetter = x;
  }
  return out;
}

/**
 * RFC 7396: members absent stay, `null` removes (schema unbound, validation off, topic derived
 * again, no TTL). Only the four changeable fields may appear; the rest of the document is
 * read-only and naming it is refused, so a patch never silently does less than asked.
 */
function parsePatch(ctx: SvcContext, req: HttpRequest): ConfigPatch {
  if (!PATCH_TYPES.has(mediaType(req.headers['content-type'] ?? ''))) {
    throw new SvcError('unsupported_media_type', 'a stream config patch is application/merge-patch+json (or application/json)');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(req.body.toString('utf8'));
  } catch (e) {
    throw new SvcError('invalid_json', (e as Error).message);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new SvcError('invalid_parameter', 'a stream config patch is a JSON object, such as {"kafkaTopic": "orders"}');
  }
  const d = doc as Record<string, unknown>;
  const refused = Object.keys(d).filter((k) => !PATCHABLE.has(k));
  if (refused.length > 0) {
    throw new SvcError('invalid_parameter', `${refused.join(', ')}: cannot be changed (a patch may set schema, schemaValidate, kafkaTopic, ttlSeconds, durability, registryValidation)`);
  }
  const out: ConfigPatch = {};
  if ('schema' in d) {
    const v = d['schema'];
    if (v !== null && typeof v !== 'string') throw new SvcError('invalid_parameter', 'schema: must be a schema name or null');
    if (v !== null) checkRegistered(ctx, 'schema', v);
    out.schema = v;
  }
  if ('schemaValidate' in d) {
    const v = d['schemaValidate'];
    if (v !== null && typeof v !== 'boolean') throw new SvcError('invalid_parameter', 'schemaValidate: must be true, false or null');
    out.schemaValidate = v ?? false;
  }
  if ('kafkaTopic' in d) {
    const v = d['kafkaTopic'];
    if (v !== null && typeof v !== 'string') throw new SvcError('invalid_parameter', 'kafkaTopic: must be a topic name or null');
    if (v !== null) checkTopic('kafkaTopic', v);
    out.kafkaTopic = v;
  }
  if ('ttlSeconds' in d) {
    const v = d['ttlSeconds'];
    if (v !== null && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)) throw new SvcError('invalid_parameter', 'ttlSeconds: must be an integer >= 0 or null');
    out.ttlSeconds = v;
  }
  if ('registryValidation' in d) out.registryValidation = parseValidationPatch(d['registryValidation']);
  if ('durability' in d) {
    const v = d['durability'];
    if (v !== null && typeof v !== 'string') throw new SvcError('invalid_parameter', 'durability: must be "sync", "async" or null');
    out.durability = v === null ? null : parseDurability('durability', v);
  }
  return out;
}

function checkRegistered(ctx: SvcContext, field: string, name: string): void {
  try {
    checkSchemaName(name);
  } catch (e) {
    throw new SvcError('invalid_parameter', `${field}: ${(e as Error).message}`);
  }
  if (!ctx.schemas.has(name)) throw new SvcError('invalid_parameter', `${field}: no schema named ${name} is registered`);
}

function checkTopic(field: string, topic: string): void {
  if (!isValidKafkaTopic(topic)) {
    throw new SvcError('invalid_parameter', `${field}: a Kafka topic is 1-249 characters of a-z, A-Z, 0-9, ".", "_" and "-", and not "." or ".."`);
  }
}
