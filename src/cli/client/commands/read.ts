/**
 * `svc read` (catch-up, page after page) and `svc tail` (live, SSE). `tail` resumes after a
 * dropped connection or a node restart at the seq after the last record it printed, so
 * nothing is printed twice and nothing is skipped (docs/protocol.md, "Server-sent events":
 * ids are seqs). A start at `now` is first resolved to a number (HEAD's Svc-Next-Seq), so
 * even a drop before the first event resumes at the right place.
 */
import { type Command, Option } from 'commander';
import { send, streamPath } from '../http';
import { CliError, EXIT } from '../errors';
import { type Registry } from '../program';
import { nonNegative, streamName } from '../args';
import { RecordPrinter, recordFormat, type JsonRecord } from '../records';
import { SseParser } from '../sse';
import { type Context } from '../context';

const PAGE = 1000;

function printer(ctx: Context, o: Record<string, unknown>): RecordPrinter {
  const write = (chunk: string | Buffer) => (typeof chunk === 'string' ? ctx.io.stdout(chunk) : process.stdout.write(chunk));
  return new RecordPrinter(write, recordFormat(ctx, o['format']), o['delimiter'] as 'line' | 'nul' | 'length', ctx.io.columns);
}

function startSeq(v: unknown): number | 'now' {
  return v === 'now' ? 'now' : nonNegative(v, '--seq');
}

async function tailSeq(ctx: Context, stream: string): Promise<number> {
  const res = await send(ctx, 'protocol', streamPath(stream), { method: 'HEAD' });
  return Number(res.headers.get('svc-next-seq'));
}

const formatOption = () => new Option('-f, --format <format>', 'raw, json (JSON lines) or table; default: table on a terminal, else raw').choices(['raw', 'json', 'table']);
const delimiterOption = () => new Option('-d, --delimiter <framing>', 'after each raw body').choices(['line', 'nul', 'length']).default('line');

export function registerRead(program: Command, { action }: Registry): void {
  program
    .command('read')
    .description('read records (catch-up; stops at the tail)')
    .argument('<stream>')
    .option('-s, --seq <seq>', 'first seq, or "now"', '0')
    .option('-n, --count <n>', 'most records (default: up to the tail)')
    .addOption(formatOption())
    .addOption(delimiterOption())
    .action(
      action(async (ctx, [name], o) => {
        const stream = streamName(name);
        const out = printer(ctx, o);
        let remaining = o['count'] === undefined ? Infinity : nonNegative(o['count'], '--count');
        let seq: number | 'now' = startSeq(o['seq']);
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
    .description('follow a stream live (SSE); reconnects and resumes without gaps')
    .argument('<stream>')
    .option('-s, --seq <seq>', 'first seq, or "now"', 'now')
    .option('-n, --count <n>', 'stop after this many records')
    .addOption(formatOption())
    .addOption(delimiterOption())
    .action(
      action(async (ctx, [name], o) => {
        const stream = streamName(name);
        const out = printer(ctx, o);
        const limit = o['count'] === undefined ? Infinity : nonNegative(o['count'], '--count');
        const given = startSeq(o['seq']);
        let next = given === 'now' ? await tailSeq(ctx, stream) : given;
        let printed = 0;
        let backoff = 100;
        while (printed < limit) {
          const outcome = await follow(ctx, stream, next, (r) => {
            if (printed >= limit || r.seq < next) return; // never print a record twice
            out.print([r]);
            printed++;
            next = r.seq + 1;
            backoff = 100;
          }, () => printed >= limit);
          if (outcome === 'done') return;
          ctx.io.stderr(`svc: tail of ${stream}: ${outcome}; resuming at seq ${next}\n`);
          await new Promise((r) => setTimeout(r, backoff));
          backoff = Math.min(backoff * 2, 2000);
        }
      }),
    );
}

/**
 * One SSE connection from `seq`. Resolves 'done' when the stream ended (sealed) or `stop()`
 * holds, or a reason to reconnect; throws when reconnecting cannot help (deleted, 4xx).
 */
async function follow(ctx: Context, stream: string, seq: number, onRecord: (r: JsonRecord) => void, stop: () => boolean): Promise<'done' | string> {
  const abort = new AbortController();
  let res: Response;
  try {
    res = await send(ctx, 'protocol', `${streamPath(stream)}?${new URLSearchParams({ seq: String(seq), live: 'sse' })}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  } catch (err) {
    // Unreachable or a 5xx (a node restarting): try again. A 4xx will not change by retrying.
    if (err instanceof CliError && (err.exitCode === EXIT.failure && err.status === undefined || err.exitCode === EXIT.server)) return err.message;
    throw err;
  }
  const parser = new SseParser();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const ev of parser.push(chunk)) {
        if (ev.event === 'record') onRecord(JSON.parse(ev.data) as JsonRecord);
        else if (ev.event === 'end') return 'done';
        else if (ev.event === 'error') {
          const e = JSON.parse(ev.data) as { error: string; message?: string };
          if (e.error === 'not_found') throw new CliError(`tail of ${stream}: the stream was deleted`, EXIT.notFound, 404, { error: e.error, message: e.message });
          abort.abort();
          return `${e.error}${e.message ? ` (${e.message})` : ''}`;
        } else if (ev.event === 'control' && (JSON.parse(ev.data) as { shutting_down?: boolean }).shutting_down) {
          abort.abort();
          return 'the node is stopping';
        }
        if (stop()) {
          abort.abort();
          return 'done';
        }
      }
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    return `connection lost (${(err as Error).message})`;
  }
  return 'the connection ended';
}
