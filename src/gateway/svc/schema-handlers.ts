/**
 * The schema registry endpoints (docs/protocol.md "Schemas"):
 *
 *   GET    /_schemas          list: {"schemas": [{name, type, version, createdAtMs, updatedAtMs}]}
 *   PUT    /_schemas/{name}   register (201) or replace (200): {"type": "json-schema", "schema": {...}}
 *   GET    /_schemas/{name}   the registration: {name, type, schema, version, createdAtMs, updatedAtMs}
 *   DELETE /_schemas/{name}   204; 409 while a stream is bound to it
 */
import { SvcError } from '../../errors';
import { type SchemaDocument, checkSchemaName, mediaType } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { type SvcContext } from './context';
import { type Reply, parseQuery } from '../kit';

export const SCHEMAS_PATH = '/_schemas';

const JSON_HEADERS: Array<[string, string]> = [
  ['content-type', 'application/json'],
  ['cache-control', 'no-store'],
];

/** `/_schemas` and `/_schemas/{name}`. */
export async function routeSchemas(ctx: SvcContext, req: HttpRequest): Promise<Reply> {
  if (parseQuery(req.query).size > 0) throw new SvcError('invalid_parameter', 'the schema endpoints take no query parameters');
  const rest = req.path.slice(SCHEMAS_PATH.length);
  if (rest === '' || rest === '/') {
    if (req.method === 'GET' || req.method === 'HEAD') return listSchemas(ctx);
    throw new SvcError('method_not_allowed', `${req.method} is not allowed on ${SCHEMAS_PATH}`, { 'header:allow': 'GET, HEAD' });
  }
  const name = schemaName(rest.slice(1));
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return document(200, ctx.schemas.get(name));
    case 'PUT': {
      const r = await ctx.schemas.put(name, jsonBody(req));
      return { ...document(r.created ? 201 : 200, r.doc), headers: [...JSON_HEADERS, ['location', `${SCHEMAS_PATH}/${name}`]] };
    }
    case 'DELETE':
      await ctx.schemas.delete(name);
      return { status: 204, headers: [] };
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a schema`, { 'header:allow': 'GET, HEAD, PUT, DELETE' });
  }
}

function schemaName(raw: string): string {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw new SvcError('invalid_parameter', 'the schema name is not valid percent-encoded UTF-8');
  }
  checkSchemaName(name);
  return name;
}

/** The registration body: `application/json`, one JSON value. */
function jsonBody(req: HttpRequest): unknown {
  const type = mediaType(req.headers['content-type'] ?? '');
  if (type !== 'application/json') throw new SvcError('unsupported_media_type', 'a schema registration is application/json');
  try {
    return JSON.parse(req.body.toString('utf8'));
  } catch (e) {
    throw new SvcError('invalid_json', (e as Error).message);
  }
}

function document(status: number, d: SchemaDocument): Reply {
  const body = { name: d.name, type: d.type, schema: d.schema, version: d.version, createdAtMs: d.createdAtMs, updatedAtMs: d.updatedAtMs };
  return { status, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

function listSchemas(ctx: SvcContext): Reply {
  const schemas = ctx.schemas.documents().map((d) => ({ name: d.name, type: d.type, version: d.version, createdAtMs: d.createdAtMs, updatedAtMs: d.updatedAtMs }));
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ schemas }) };
}
