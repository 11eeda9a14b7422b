/**
 * `svc schema subjects|versions|show|register|check|delete|compatibility`: the schema registry's
 * subjects over the admin listener (`/admin/schemas…`, docs/schema-registry.md "Admin API").
 * The stream schema `svc schema put <name>` writes is the subject `svc-<name>` here.
 */
import { type Command } from 'commander';
import { jsonBody, send, sendJson } from '../http';
import { emit, fields, table } from '../output';
import { CliError, EXIT, usageError } from '../errors';
import { type Registry } from '../program';
import { readInput } from '../args';

const subjectPath = (subject: string, rest = ''): string => `/admin/schemas/${encodeURIComponent(subject)}${rest}`;
const TYPES = ['AVRO', 'JSON', 'PROTOBUF'];

function schemaType(o: Record<string, unknown>, file: string): string {
  const given = o['type'];
  if (given !== undefined) {
    const t = String(given).toUpperCase();
    if (!TYPES.includes(t)) throw usageError(`--type is one of ${TYPES.join(', ')}`);
    return t;
  }
  // From the file's extension: .proto PROTOBUF, .avsc AVRO, .json JSON (JSON Schema); else AVRO, as the registry.
  if (file.endsWith('.proto')) return 'PROTOBUF';
  if (file.endsWith('.json')) return 'JSON';
  return 'AVRO';
}

function versionArg(v: unknown): string {
  const s = String(v);
  if (s !== 'latest' && !/^[1-9][0-9]{0,9}$/.test(s)) throw usageError(`version ${s}: a number from 1, or latest`);
  return s;
}

interface SubjectRow {
  subject: string;
  versions: number[];
  latest: { version: number; id: number; schemaType: string };
  compatibilityLevel: string;
  streams: string[];
}

export function registerSchemaRegistry(schema: Command, { action }: Registry): void {
  schema
    .command('subjects')
    .description('list the registry subjects: versions, latest id and type, compatibility, bound streams')
    .option('--prefix <prefix>', 'only subjects starting with it')
    .action(
      action(async (ctx, _args, o) => {
        const q = o['prefix'] === undefined ? '' : `?prefix=${encodeURIComponent(String(o['prefix']))}`;
        const doc = await sendJson<{ compatibilityLevel: string; mode: string; subjects: SubjectRow[] }>(ctx, 'admin', `/admin/schemas${q}`);
        emit(ctx, doc, () => {
          if (doc.subjects.length === 0) return `no subjects (compatibility ${doc.compatibilityLevel}, mode ${doc.mode})\n`;
          const rows = doc.subjects.map((s) => ({ subject: s.subject, versions: s.versions.join(','), id: s.latest.id, type: s.latest.schemaType, compatibility: s.compatibilityLevel, streams: s.streams.join(',') }));
          return table(rows, ['subject', 'versions', 'id', 'type', 'compatibility', 'streams'], ctx.io.columns);
        });
      }),
    );
  schema
    .command('versions')
    .description("a subject's versions")
    .argument('<subject>')
    .option('--deleted', 'soft-deleted versions too')
    .action(
      action(async (ctx, [subject], o) => {
        const doc = await sendJson<{ versions: Array<{ version: number; id: number; schemaType: string; deleted: boolean }>; compatibilityLevel: string; streams: string[] }>(
          ctx,
          'admin',
          subjectPath(String(subject), o['deleted'] === true ? '?deleted=true' : ''),
        );
        emit(ctx, doc, () => table(doc.versions.map((v) => ({ version: v.version, id: v.id, type: v.schemaType, deleted: v.deleted })), ['version', 'id', 'type', 'deleted'], ctx.io.columns));
      }),
    );
  schema
    .command('show')
    .description('print one version of a subject (default: the latest)')
    .argument('<subject>')
    .argument('[version]', 'a version number or latest')
    .action(
      action(async (ctx, [subject, version]) => {
        const doc = await sendJson<{ subject: string; version: number; id: number; schemaType: string; schema: string }>(ctx, 'admin', subjectPath(String(subject), `/versions/${versionArg(version ?? 'latest')}`));
        emit(ctx, doc, () => {
          let text = doc.schema;
          try {
            text = JSON.stringify(JSON.parse(doc.schema), null, 2);
          } catch {
            // PROTOBUF: the text as registered
          }
          return `# ${doc.subject} version ${doc.version} (id ${doc.id}, ${doc.schemaType})\n${text}\n`;
        });
      }),
    );
  schema
    .command('register')
    .description('register a schema from a file under a subject (checked against its compatibility level)')
    .argument('<subject>')
    .argument('<file>', 'the schema: .avsc AVRO, .json JSON Schema, .proto PROTOBUF (or --type); "-" reads stdin')
    .option('--type <type>', 'AVRO, JSON or PROTOBUF')
    .option('--normalize', 'store the normalized form')
    .action(
      action(async (ctx, [subject, file], o) => {
        const text = await readInput(String(file));
        const doc = await sendJson<{ subject: string; id: number; version: number }>(ctx, 'admin', subjectPath(String(subject), `/versions${o['normalize'] === true ? '?normalize=true' : ''}`), {
          method: 'POST',
          ...jsonBody({ schema: text, schemaType: schemaType(o, String(file)) }),
        });
        emit(ctx, doc, () => `registered ${doc.subject} version ${doc.version} (id ${doc.id})\n`);
      }),
    );
  schema
    .command('check')
    .description("check a schema file against a subject's compatibility level (exit 1 when incompatible)")
    .argument('<subject>')
    .argument('<file>', 'the schema ("-" reads stdin)')
    .option('--type <type>', 'AVRO, JSON or PROTOBUF')
    .option('--version <version>', 'against this version only')
    .action(
      action(async (ctx, [subject, file], o) => {
        const text = await readInput(String(file));
        const body: Record<string, unknown> = { schema: text, schemaType: schemaType(o, String(file)) };
        if (o['version'] !== undefined) body['version'] = versionArg(o['version']);
        const doc = await sendJson<{ compatible: boolean; messages: string[] }>(ctx, 'admin', subjectPath(String(subject), '/compatibility'), { method: 'POST', ...jsonBody(body) });
        emit(ctx, doc, () => (doc.compatible ? 'compatible\n' : `incompatible:\n${doc.messages.map((m) => `  ${m}\n`).join('')}`));
        if (!doc.compatible) throw new CliError(`the schema is not compatible with subject ${String(subject)}`, EXIT.failure);
      }),
    );
  schema
    .command('delete')
    .description('delete a subject, or one version (soft; --permanent after a soft delete)')
    .argument('<subject>')
    .option('--version <version>', 'only this version')
    .option('--permanent', 'remove for good (after a soft delete)')
    .action(
      action(async (ctx, [subject], o) => {
        const q = o['permanent'] === true ? '?permanent=true' : '';
        const rest = o['version'] === undefined ? q : `/versions/${versionArg(o['version'])}${q}`;
        const res = await send(ctx, 'admin', subjectPath(String(subject), rest), { method: 'DELETE' });
        const doc = (await res.json()) as Record<string, unknown>;
        emit(ctx, doc, () => fields(doc));
      }),
    );
  schema
    .command('compatibility')
    .description("print a subject's compatibility level, or set it")
    .argument('<subject>')
    .argument('[level]', 'BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE or NONE')
    .action(
      action(async (ctx, [subject, level]) => {
        const doc =
          level === undefined
            ? await sendJson<Record<string, unknown>>(ctx, 'admin', subjectPath(String(subject), '/config'))
            : await sendJson<Record<string, unknown>>(ctx, 'admin', subjectPath(String(subject), '/config'), { method: 'PUT', ...jsonBody({ compatibility: String(level).toUpperCase() }) });
        emit(ctx, doc, () => fields(doc));
      }),
    );
}
