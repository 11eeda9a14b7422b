/**
 * `GET …?live=sse` (PROTOCOL.md "SSE"): `event: data` with the messages of a page, then
 * `event: control` with `streamNextOffset`, `streamCursor` (while open), `upToDate` and
 * `streamClosed` — a control event after every data event, and one on its own when a reader
 * reaches the tail with nothing to send. Payloads:
 * - JSON streams: each data event is one complete JSON array;
 * - text streams: the text, split on CR/LF into `data:` lines;
 * - anything else: base64, announced by `Stream-SSE-Data-Encoding: base64`.
 * The response ends after `--sse-reconnect-ms` (clients reconnect from the last offset), when the
 * stream is closed and read to its end, or when it is deleted.
 */
import { type ReadParams, type ReadResult, mediaType } from '../../shards';
import { type HttpRequest, type HttpResponse } from '../http/engine';
import { type LiveReader, LongPoll, type Reply, SSE_PAGE_BYTES, type StreamWatch } from '../kit';
import { type DsContext } from './context';
import { nextCursor } from './cursor';
import { COMMON_HEADERS, H } from './ds-headers';
import { type ReadRequest } from './ds-read';
import { type DsFormat, type DsPage, readPage } from './fork-reads';
import { formatOffset } from './offsets';

type Encoding = 'json' | 'text' | 'base64';

function encodingOf(contentType: string): Encoding {
  const t = mediaType(contentType);
  if (t === 'application/json' || t.endsWith('+json')) return 'json';
  if (t.startsWith('text/') || t === 'application/xml' || t.endsWith('+xml') || t === 'application/javascript' || t === 'application/x-ndjson' || t === 'application/ndjson') return 'text';
  return 'base64';
}

/** Rendered data events by page body: readers woken at one position share the page, and so its event. */
const EVENTS = new WeakMap<Buffer, string>();

function dataEvent(body: Buffer, enc: Encoding): string {
  const hit = EVENTS.get(body);
  if (hit !== undefined) return hit;
  const event = renderData(body, enc);
  EVENTS.set(body, event);
  return event;
}

function renderData(body: Buffer, enc: Encoding): string {
  const text = enc === 'base64' ? body.toString('base64') : body.toString('utf8');
  const lines = text.split(/\r\n|\r|\n/);
  return `event: data\n${lines.map((l) => `data:${l}`).join('\n')}\n\n`;
}

function controlEvent(p: DsPage, cursor: string | undefined): string {
  const c: Record<string, unknown> = { streamNextOffset: formatOffset(p.nextSeq) };
  if (p.closed) c['streamClosed'] = true;
  else c['streamCursor'] = nextCursor(cursor);
  if (p.upToDate) c['upToDate'] = true;
  return `event: control\ndata:${JSON.stringify(c)}\n\n`;
}

export async function readDsSse(ctx: DsContext, name: string, format: DsFormat, rr: ReadRequest, _req: HttpRequest, res: HttpResponse): Promise<Reply | null> {
  // Not pooled (its pages are turned into events and dropped, never handed back): a read of its own.
  const own = (q: ReadParams): Promise<ReadResult> => ctx.shards.read(q);
  let p = await readPage(ctx.shards, name, rr.seq, format, SSE_PAGE_BYTES, own);
  const enc = encodingOf(p.contentType);
  const headers: Array<readonly [string, string]> = [...COMMON_HEADERS, ['content-type', 'text/event-stream'], ['cache-control', 'no-cache'], ['connection', 'keep-alive']];
  if (enc === 'base64') headers.push([H.sseEncoding, 'base64']);
  res.writeHead(200, headers);
  const live = ctx.live;
  const streamId = p.streamId;
  // What ends the response early: the client leaving, the reconnect interval, shutdown.
  let final: 'aborted' | 'timeout' | 'shutdown' | null = null;
  let current: LongPoll | null = null;
  let wake: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (wake = resolve));
  const end = (why: 'aborted' | 'timeout' | 'shutdown'): void => {
    final ??= why;
    current?.settle(why);
    wake();
  };
  // Keep-alive comments come from the registry's one timer for every live reader (LiveWaiters,
  // every SSE_KEEP_ALIVE_MS), not from an interval of each response's own.
  const reader: LiveReader = {
    kind: 'sse',
    shutdown: () => end('shutdown'),
    keepAlive: () => {
      if (final === null) res.write(': keep-alive\n\n');
    },
  };
  res.onAborted(() => end('aborted'));
  const reconnect = setTimeout(() => end('timeout'), ctx.sseReconnectMs);
  live.add(reader);
  let watch: StreamWatch | null = null;
  try {
    /** `p` was written already and nothing came at its end: wait again without writing it twice. */
    let written = false;
    for (;;) {
      if (!written) {
        let out = '';
        if (p.count > 0) out += dataEvent(p.body, enc);
        out += controlEvent(p, rr.cursor);
        if (!res.write(out)) await Promise.race([new Promise<void>((resolve) => res.onWritable(resolve)), ended]);
        if (final !== null || p.closed) break;
        if (!p.upToDate) {
          p = await readPage(ctx.shards, name, p.nextSeq, format, SSE_PAGE_BYTES, own);
          continue;
        }
      }
      written = false;
      // At the tail: wait for it to move (or for the stream to close or go).
      const at = p.nextSeq;
      watch ??= live.join(name);
      const waiter = new LongPoll(at, streamId);
      current = waiter;
      const outcome = waiter.next();
      live.wait(watch, waiter);
      const o = await outcome;
      live.cancel(watch, waiter);
      current = null;
      if (o !== 'due' || final !== null) break;
      const w = watch;
      const next = await readPage(ctx.shards, name, at, format, SSE_PAGE_BYTES, (q) => live.page(w, q));
      if (next.streamId !== streamId) break;
      // Nothing at `at` yet (a trim, a stale shared page): wait again there, without writing p again.
      if (next.count === 0 && !next.closed && next.nextSeq <= at) {
        written = true;
        continue;
      }
      // Records, the end, or a position moved past records no reader is shown (Kafka transaction markers, aborted transactions).
      p = next;
    }
  } catch {
    // The stream was deleted (or storage failed) mid-response: end it.
  } finally {
    clearTimeout(reconnect);
    live.remove(reader);
    if (watch !== null) live.leave(watch);
    if (!res.aborted) res.end();
  }
  return null;
}
