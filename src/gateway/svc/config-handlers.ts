/**
 * Stream config (docs/protocol.md "Stream config"): the create headers Svc-Schema,
 * Svc-Schema-Validate, Svc-Kafka-Topic and Svc-Durability, and the config document
 *
 *   GET   /_streams/{name}   {name, contentType, createdAtMs, ttlSeconds, expiresAtMs, closed,
 *                             schema, schemaValidate, kafkaTopic, kafkaTopicDerived,
 *                             durability, durabilityDefault}
 *   PATCH /_streams/{name}   JSON merge patch (RFC 7396) of schema, schemaValidate, kafkaTopic, ttlSeconds, durability
 *
 * `{name}` is the rest of the path: /_streams/orders/eu is the stream /orders/eu.
 */
import { SvcError } from '../../errors';
import { type Durability, type StreamInfo, checkSchemaName, mediaType } from '../../shards';
import { deriveKafkaTopic, isValidKafkaTopic } from '../../util/kafka-topic';
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
      return configReply(await ctx.shards.head(name));
    case 'PATCH':
      return configReply(await ctx.shards.configure({ name, ...parsePatch(ctx, req) }));
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

function configReply(s: StreamInfo): Reply {
  return {
    status: 200,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'no-store'],
    ],
    body: JSON.stringify(configDocument(s)),
  };
}

const PATCHABLE: ReadonlySet<string> = new Set(['schema', 'schemaValidate', 'kafkaTopic', 'ttlSeconds', 'durability']);
const PATCH_TYPES: ReadonlySet<string> = new Set(['application/merge-patch+json', 'application/json']);

interface ConfigPatch {
  schema?: string | null;
  schemaValidate?: boolean;
  kafkaTopic?: string | null;
  ttlSeconds?: number | null;
  durability?: Durability | null;
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
    throw new SvcError('invalid_parameter', `${refused.join(', ')}: cannot be changed (a patch may set schema, schemaValidate, kafkaTopic, ttlSeconds, durability)`);
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
