/**
 * `svc schema put|get|ls|rm` (stream schemas at /_schemas/{name}; the registry's subjects: commands/schema-registry.ts) and `svc config get|patch`
 * (the stream config at /_streams/{stream}); documents as in docs/protocol.md, "Schemas" and
 * "Stream config".
 */
import { type Command } from 'commander';
import { jsonBody, send, sendJson, streamPath } from '../http';
import { emit, fields, table } from '../output';
import { usageError } from '../errors';
import { type Registry } from '../program';
import { nonNegative, readInput, streamName } from '../args';
import { registerSchemaRegistry } from './schema-registry';

const schemaPath = (name: string) => `/_schemas/${encodeURIComponent(name)}`;

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw usageError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

export function registerSchemaConfig(program: Command, reg: Registry): void {
  const { action } = reg;
  const schema = program.command('schema').description('stream schemas (put, get, ls, rm) and the registry subjects (subjects, versions, show, register, check, delete, compatibility)');
  registerSchemaRegistry(schema, reg);
  schema
    .command('put')
    .description('register or replace a JSON Schema')
    .argument('<name>')
    .argument('<file>', 'a JSON Schema, or a registration document {"type":"json-schema","schema":…}; "-" reads stdin')
    .action(
      action(async (ctx, [name, file]) => {
        const doc = parseJson(await readInput(String(file)), String(file)) as Record<string, unknown>;
        const registration = doc !== null && typeof doc === 'object' && doc['type'] === 'json-schema' && 'schema' in doc ? doc : { type: 'json-schema', schema: doc };
        const res = await send(ctx, 'protocol', schemaPath(String(name)), { method: 'PUT', ...jsonBody(registration) });
        const stored = (await res.json()) as { name: string; version: number };
        emit(ctx, stored, () => `${res.status === 201 ? 'registered' : 'updated'} schema ${stored.name} (version ${stored.version})\n`);
      }),
    );
  schema
    .command('get')
    .description('print a registered schema')
    .argument('<name>')
    .action(
      action(async (ctx, [name]) => {
        const doc = await sendJson<Record<string, unknown>>(ctx, 'protocol', schemaPath(String(name)));
        emit(ctx, doc, () => JSON.stringify(doc, null, 2) + '\n');
      }),
    );
  schema
    .command('ls')
    .description('list registered schemas')
    .action(
      action(async (ctx) => {
        const doc = await sendJson<{ schemas: Record<string, unknown>[] }>(ctx, 'protocol', '/_schemas');
        emit(ctx, doc, () => (doc.schemas.length === 0 ? 'no schemas\n' : table(doc.schemas, ['name', 'type', 'version', 'updatedAtMs'], ctx.io.columns)));
      }),
    );
  schema
    .command('rm')
    .description('delete a schema (refused while a stream is bound to it)')
    .argument('<name>')
    .action(
      action(async (ctx, [name]) => {
        await send(ctx, 'protocol', schemaPath(String(name)), { method: 'DELETE' });
        emit(ctx, { name, deleted: true }, () => `deleted schema ${String(name)}\n`);
      }),
    );

  const config = program.command('config').description("a stream's config (schema binding, validation, Kafka topic, TTL)");
  config
    .command('get')
    .argument('<stream>')
    .description("print a stream's config")
    .action(
      action(async (ctx, [name]) => {
        const doc = await sendJson<Record<string, unknown>>(ctx, 'protocol', `/_streams${streamPath(streamName(name)).slice(0)}`);
        emit(ctx, doc, () => fields(doc));
      }),
    );
  config
    .command('patch')
    .argument('<stream>')
    .argument('[patch]', 'a JSON merge patch, e.g. {"ttlSeconds":3600}; "-" reads stdin')
    .description("change a stream's config (JSON merge patch, or the flags)")
    .option('--schema <name>', 'bind a schema ("none" unbinds)')
    .option('--validate <bool>', 'true or false')
    .option('--kafka-topic <topic>', 'Kafka topic ("derived" goes back to the derived one)')
    .option('--ttl <seconds>', 'record retention ("none" removes it)')
    .action(
      action(async (ctx, [name, patchArg], o) => {
        const patch: Record<string, unknown> = patchArg === undefined ? {} : (parseJson(patchArg === '-' ? await readInput('-') : String(patchArg), 'the patch') as Record<string, unknown>);
        if (o['schema'] !== undefined) patch['schema'] = o['schema'] === 'none' ? null : o['schema'];
        if (o['validate'] !== undefined) {
          if (o['validate'] !== 'true' && o['validate'] !== 'false') throw usageError('--validate takes true or false');
          patch['schemaValidate'] = o['validate'] === 'true';
        }
        if (o['kafkaTopic'] !== undefined) patch['kafkaTopic'] = o['kafkaTopic'] === 'derived' ? null : o['kafkaTopic'];
        if (o['ttl'] !== undefined) patch['ttlSeconds'] = o['ttl'] === 'none' ? null : nonNegative(o['ttl'], '--ttl');
        if (Object.keys(patch).length === 0) throw usageError('nothing to change: give a JSON patch or a flag');
        const doc = await sendJson<Record<string, unknown>>(ctx, 'protocol', `/_streams${streamPath(streamName(name))}`, {
          method: 'PATCH',
          ...jsonBody(patch, 'application/merge-patch+json'),
        });
        emit(ctx, doc, () => fields(doc));
      }),
    );
}
