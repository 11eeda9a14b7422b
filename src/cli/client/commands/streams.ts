/**
 * Stream lifecycle commands: create, head, ls, rm, trim, seal (docs/protocol.md: "Create",
 * "Append, seal, trim", "Inspect, delete, list").
 */
import { type Command, Option } from 'commander';
import { send, sendJson, streamPath } from '../http';
import { emit, fields, table } from '../output';
import { usageError } from '../errors';
import { type Registry } from '../program';
import { nonNegative, streamName } from '../args';

interface ListEntry {
  name: string;
  content_type: string;
  start_seq: number;
  next_seq: number;
  closed: boolean;
  ttl: number | null;
  expires_at: string | null;
}

/** The stream metadata HEAD reports, as one object. */
export function headFields(res: Response): Record<string, unknown> {
  const h = res.headers;
  const num = (n: string) => (h.get(n) === null ? null : Number(h.get(n)));
  return {
    contentType: h.get('content-type'),
    startSeq: num('svc-start-seq'),
    nextSeq: num('svc-next-seq'),
    closed: h.get('svc-closed') === 'true',
    ttl: num('svc-ttl'),
    expiresAt: h.get('svc-expires-at'),
    schema: h.get('svc-schema'),
    kafkaTopic: h.get('svc-kafka-topic'),
  };
}

export function registerStreams(program: Command, { action }: Registry): void {
  program
    .command('create')
    .description('create a stream (idempotent when the content type matches)')
    .argument('<stream>', 'stream name, e.g. /orders/eu')
    .option('-t, --content-type <type>', 'content type of its records', 'application/octet-stream')
    .option('--ttl <seconds>', 'record retention in seconds')
    .option('--expires-at <time>', 'remove the stream at this time (RFC 3339 or unix ms)')
    .option('--sealed', 'create it already sealed')
    .option('--schema <name>', 'bind a registered schema')
    .option('--validate', 'validate appends against the bound schema')
    .option('--kafka-topic <topic>', 'Kafka topic (default: derived from the name)')
    .addOption(new Option('--durability <class>', "acknowledge after fdatasync (sync) or after the write (async); default: the node's").choices(['sync', 'async']))
    .action(
      action(async (ctx, [name], o) => {
        const headers: Record<string, string> = { 'content-type': String(o['contentType']) };
        if (o['ttl'] !== undefined) headers['svc-ttl'] = String(nonNegative(o['ttl'], '--ttl'));
        if (o['expiresAt'] !== undefined) headers['svc-expires-at'] = String(o['expiresAt']);
        if (o['sealed']) headers['svc-closed'] = 'true';
        if (o['schema'] !== undefined) headers['svc-schema'] = String(o['schema']);
        if (o['validate']) headers['svc-schema-validate'] = 'true';
        if (o['kafkaTopic'] !== undefined) headers['svc-kafka-topic'] = String(o['kafkaTopic']);
        if (o['durability'] !== undefined) headers['svc-durability'] = String(o['durability']);
        const stream = streamName(name);
        const res = await send(ctx, 'protocol', streamPath(stream), { method: 'PUT', headers });
        const out = { stream, created: res.status === 201, nextSeq: Number(res.headers.get('svc-next-seq')) };
        emit(ctx, out, () => `${out.created ? 'created' : 'exists'} ${stream}\n`);
      }),
    );

  program
    .command('head')
    .description("show a stream's metadata (seqs, sealed, retention, schema)")
    .argument('<stream>')
    .action(
      action(async (ctx, [name]) => {
        const stream = streamName(name);
        const res = await send(ctx, 'protocol', streamPath(stream), { method: 'HEAD' });
        const out = { stream, ...headFields(res) };
        emit(ctx, out, () => fields(out));
      }),
    );

  program
    .command('ls')
    .description('list streams (every page)')
    .argument('[prefix]', 'name prefix', '/')
    .option('--limit <n>', 'most streams to list')
    .option('--page-size <n>', 'streams per request', '1000')
    .action(
      action(async (ctx, [prefixArg], o) => {
        const prefix = String(prefixArg).startsWith('/') ? String(prefixArg) : `/${String(prefixArg)}`;
        const limit = o['limit'] === undefined ? Infinity : nonNegative(o['limit'], '--limit');
        const pageSize = nonNegative(o['pageSize'], '--page-size');
        if (pageSize === 0) throw usageError('--page-size must be at least 1');
        const all: ListEntry[] = [];
        let after: string | undefined;
        while (all.length < limit) {
          const q = new URLSearchParams({ prefix, limit: String(Math.min(pageSize, limit - all.length)) });
          if (after !== undefined) q.set('start_after', after);
          const page = await sendJson<{ streams: ListEntry[]; has_more: boolean }>(ctx, 'protocol', `/?${q}`);
          all.push(...page.streams);
          if (!page.has_more || page.streams.length === 0) break;
          after = page.streams[page.streams.length - 1]!.name;
        }
        emit(ctx, { streams: all }, () =>
          all.length === 0 ? 'no streams\n' : table(all as unknown as Record<string, unknown>[], ['name', 'content_type', 'start_seq', 'next_seq', 'closed', 'ttl', 'expires_at'], ctx.io.columns),
        );
      }),
    );

  program
    .command('rm')
    .description('delete a stream and its records')
    .argument('<stream>')
    .action(
      action(async (ctx, [name]) => {
        const stream = streamName(name);
        await send(ctx, 'protocol', streamPath(stream), { method: 'DELETE' });
        emit(ctx, { stream, deleted: true }, () => `deleted ${stream}\n`);
      }),
    );

  program
    .command('trim')
    .description('drop every record below <seq>')
    .argument('<stream>')
    .argument('<seq>', 'the new first seq')
    .action(
      action(async (ctx, [name, seq]) => {
        const stream = streamName(name);
        const res = await send(ctx, 'protocol', streamPath(stream), { method: 'POST', headers: { 'svc-trim-seq': String(nonNegative(seq, '<seq>')) } });
        const out = { stream, startSeq: Number(res.headers.get('svc-start-seq')), nextSeq: Number(res.headers.get('svc-next-seq')) };
        emit(ctx, out, () => `trimmed ${stream}: records start at ${out.startSeq}\n`);
      }),
    );

  program
    .command('seal')
    .description('seal a stream: it takes no more appends')
    .argument('<stream>')
    .action(
      action(async (ctx, [name]) => {
        const stream = streamName(name);
        const res = await send(ctx, 'protocol', streamPath(stream), { method: 'POST', headers: { 'svc-closed': 'true' } });
        const out = { stream, closed: true, nextSeq: Number(res.headers.get('svc-next-seq')) };
        emit(ctx, out, () => `sealed ${stream} at seq ${out.nextSeq}\n`);
      }),
    );
}
