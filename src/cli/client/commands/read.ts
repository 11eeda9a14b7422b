/**
 * `svc read` (catch-up, page after page) and `svc tail` (live, SSE, one or several streams).
 * Both start at `--seq`, the last N records or `--since` a time (start-position.ts); `tail
 * --group` starts at the group's named offset instead and commits as it prints
 * (offset-committer.ts), so a tail that is stopped or killed and run again continues where it was.
 */
import { type Command, Option } from 'commander';
import { send, streamPath } from '../http';
import { usageError } from '../errors';
import { type Registry } from '../program';
import { nonNegative, streamName } from '../args';
import { RecordPrinter, recordFormat, type JsonRecord } from '../records';
import { type Context } from '../context';
import { parseTemplate } from '../template';
import { resolveStart, startSpec } from '../start-position';
import { followStream } from '../follow';
import { OffsetCommitter } from '../offset-committer';

const PAGE = 1000;

/** A printer for `stream`; `label`: several streams share the output, so each record names its stream. */
function printer(ctx: Context, o: Record<string, unknown>, stream: string, label: boolean): RecordPrinter {
  const write = (chunk: string | Buffer) => (typeof chunk === 'string' ? ctx.io.stdout(chunk) : process.stdout.write(chunk));
  const fmt = o['template'] !== undefined ? String(o['template']) : ctx.template;
  const format = fmt !== null ? 'template' : recordFormat(ctx, o['format']);
  if (label && format === 'raw' && o['delimiter'] !== 'line') throw usageError('several streams: raw output needs --delimiter line (each line starts with its stream), or use -f json or a template with %t');
  return new RecordPrinter(write, format, o['delimiter'] as 'line' | 'nul' | 'length', ctx.io.columns, fmt === null ? null : parseTemplate(fmt), label ? stream : null, stream);
}

const formatOption = () => new Option('-f, --format <format>', 'raw, json (JSON lines) or table; default: table on a terminal, else raw').choices(['raw', 'json', 'table']);
const delimiterOption = () => new Option('-d, --delimiter <framing>', 'after each raw body').choices(['line', 'nul', 'length']).default('line');
const templateOption = () => new Option('--template <fmt>', 'print each record through a template: %s body, %k key, %o seq, %T/%d time, %t stream, %h headers, \\n (same as -o template=<fmt>)');
const sinceOption = () => new Option('--since <time>', 'start at the first record at or after this time: RFC 3339, unix ms, or ago (90s, 15m, 2h, 1d)');

export function registerRead(program: Command, { action }: Registry): void {
  program
    .command('read')
    .description('read records (catch-up; stops at the tail)')
    .argument('<stream>')
    .option('-s, --seq <seq>', 'first seq, or "now" (default 0)')
    .option('--last <n>', 'start with the last n records')
    .addOption(sinceOption())
    .option('-n, --count <n>', 'most records (default: up to the tail)')
    .addOption(formatOption())
    .addOption(delimiterOption())
    .addOption(templateOption())
    .action(
      action(async (ctx, [name], o) => {
        const stream = streamName(name);
        const out = printer(ctx, o, stream, false);
        let remaining = o['count'] === undefined ? Infinity : nonNegative(o['count'], '--count');
        let seq = await resolveStart(ctx, stream, startSpec(o, 'last', { kind: 'seq', seq: 0 }));
        while (remaining > 0) {
          const q = new URLSearchParams({ seq: String(seq), count: String(Math.min(PAGE, remaining)), format: 'json' });
          const res = await send(ctx, 'protocol', `${streamPath(stream)}?${q}`);
          const records = (await res.json()) as JsonRecord[];
          out.print(records);
          await ctx.io.drain();
          remaining -= records.length;
          seq = Number(res.headers.get('svc-next-seq'));
          if (res.headers.get('svc-up-to-date') === 'true' || records.length === 0) break;
        }
      }),
    );

  program
    .command('tail')
    .description('follow streams live (SSE); reconnects and resumes without gaps; --group keeps the position on the node')
    .argument('<stream...>', 'one or more streams; with several, each record is labelled with its stream')
    .option('-s, --seq <seq>', 'first seq, or "now" (default now)')
    .option('-n, --lines <n>', 'start with the last n records, then follow (as tail -n)')
    .addOption(sinceOption())
    .option('-c, --count <n>', 'stop after this many records (all streams together)')
    .option('-g, --group <name>', 'resume from, and commit to, this named offset on the node (the start flags apply only when the group has none)')
    .addOption(formatOption())
    .addOption(delimiterOption())
    .addOption(templateOption())
    .action(
      action(async (ctx, [names], o) => {
        const streams = [...new Set((names as string[]).map(streamName))];
        const label = streams.length > 1;
        const limit = o['count'] === undefined ? Infinity : nonNegative(o['count'], '--count');
        const spec = startSpec(o, 'lines', { kind: 'now' });
        const group = o['group'] === undefined ? null : String(o['group']);
        if (group === '') throw usageError('--group needs a name');
        // Everything that can fail before the first record is checked for every stream first.
        const plans = await Promise.all(
          streams.map(async (stream) => {
            const committer = group === null ? null : new OffsetCommitter(ctx, stream, group);
            const committed = committer === null ? null : await committer.load();
            return { stream, out: printer(ctx, o, stream, label), committer, start: committed ?? (await resolveStart(ctx, stream, spec)) };
          }),
        );
        let printed = 0;
        const abort = new AbortController();
        const stopped = () => printed >= limit || abort.signal.aborted;
        // With a group, Ctrl-C and SIGTERM first commit what was printed, then exit (130, 143).
        let signalled: NodeJS.Signals | null = null;
        const onSignal = (s: NodeJS.Signals) => {
          if (signalled !== null) process.exit(1);
          signalled = s;
          abort.abort();
        };
        if (group !== null) for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, onSignal);
        try {
          await Promise.all(
            plans.map((p) =>
              followStream(ctx, p.stream, p.start, {
                signal: abort.signal,
                stopped,
                deliver: async (records) => {
                  const take = records.slice(0, Math.max(0, limit - printed));
                  if (take.length === 0) return;
                  printed += take.length;
                  p.out.print(take);
                  await ctx.io.drain();
                  p.committer?.advance(take[take.length - 1]!.seq + 1);
                  if (printed >= limit) abort.abort(); // the other streams' connections close too
                },
              }).catch((err: unknown) => {
                abort.abort(); // one stream failing ends the command
                throw err;
              }),
            ),
          );
        } finally {
          await Promise.all(plans.map((p) => p.committer?.flush()));
          for (const s of ['SIGINT', 'SIGTERM'] as const) process.off(s, onSignal);
        }
        if (signalled !== null) process.exit(signalled === 'SIGINT' ? 130 : 143);
      }),
    );
}
