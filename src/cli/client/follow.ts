/**
 * Following one stream over server-sent events for `svc tail` (docs/protocol.md, "Server-sent
 * events": event ids are seqs). When the connection drops — the node restarts, a proxy times
 * out, the node drops a slow reader — it reconnects (backoff 0.1 s doubling to 2 s, forever) at
 * the seq after the last record delivered, so nothing is delivered twice and nothing is skipped.
 */
import { send, streamPath } from './http';
import { CliError, EXIT } from './errors';
import { SseParser } from './sse';
import { type Context } from './context';
import { type JsonRecord } from './json-record';

export interface FollowHooks {
  /** Records of one received chunk, in seq order, none already delivered; resolves once they are out. */
  deliver(records: JsonRecord[]): Promise<void>;
  /** True once the command needs no more records (a count reached, a signal). */
  stopped(): boolean;
  /** Aborted on a signal: the open connection is closed at once. */
  readonly signal: AbortSignal;
}

/** Follows `stream` from `seq` until it is sealed or `stopped()`; resolves to the next seq. */
export async function followStream(ctx: Context, stream: string, seq: number, hooks: FollowHooks): Promise<number> {
  let next = seq;
  let backoff = 100;
  while (!hooks.stopped()) {
    const outcome = await connect(ctx, stream, next, hooks, async (records) => {
      const fresh = records.filter((r) => r.seq >= next); // never deliver a record twice
      if (fresh.length === 0) return;
      await hooks.deliver(fresh);
      next = fresh[fresh.length - 1]!.seq + 1;
      backoff = 100;
    });
    // A connection closed because the command is done is not a lost one: nothing to say.
    if (outcome === 'done' || hooks.stopped()) return next;
    ctx.io.stderr(`svc: tail of ${stream}: ${outcome}; resuming at seq ${next}\n`);
    await new Promise((r) => setTimeout(r, backoff));
    backoff = Math.min(backoff * 2, 2000);
  }
  return next;
}

/**
 * One SSE connection from `seq`. Resolves 'done' when the stream ended (sealed) or the command
 * stopped, or a reason to reconnect; throws when reconnecting cannot help (deleted, 4xx).
 */
async function connect(ctx: Context, stream: string, seq: number, hooks: FollowHooks, onRecords: (r: JsonRecord[]) => Promise<void>): Promise<'done' | string> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  hooks.signal.addEventListener('abort', onSignal);
  try {
    let res: Response;
    try {
      res = await send(ctx, 'protocol', `${streamPath(stream)}?${new URLSearchParams({ seq: String(seq), live: 'sse' })}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    } catch (err) {
      if (abort.signal.aborted) return 'done';
      // Unreachable or a 5xx (a node restarting): try again. A 4xx will not change by retrying.
      if (err instanceof CliError && ((err.exitCode === EXIT.failure && err.status === undefined) || err.exitCode === EXIT.server)) return err.message;
      throw err;
    }
    const parser = new SseParser();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const records: JsonRecord[] = [];
        let end: 'done' | string | null = null;
        for (const ev of parser.push(chunk)) {
          if (ev.event === 'record') records.push(JSON.parse(ev.data) as JsonRecord);
          else if (ev.event === 'end') end = 'done';
          else if (ev.event === 'error') {
            const e = JSON.parse(ev.data) as { error: string; message?: string };
            if (e.error === 'not_found') throw new CliError(`tail of ${stream}: the stream was deleted`, EXIT.notFound, 404, { error: e.error, message: e.message });
            end = `${e.error}${e.message ? ` (${e.message})` : ''}`;
          } else if (ev.event === 'control' && (JSON.parse(ev.data) as { shutting_down?: boolean }).shutting_down) end = 'the node is stopping';
          if (end !== null) break;
        }
        await onRecords(records);
        if (end !== null || hooks.stopped()) {
          abort.abort();
          return end ?? 'done';
        }
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (abort.signal.aborted) return 'done';
      return `connection lost (${(err as Error).message})`;
    }
    return 'the connection ended';
  } finally {
    hooks.signal.removeEventListener('abort', onSignal);
  }
}
