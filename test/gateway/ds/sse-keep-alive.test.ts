/**
 * The Durable Streams SSE response's keep-alive comments (src/gateway/ds/ds-sse.ts): written on
 * the live registry's one timer for every reader (LiveWaiters, `keepAliveMs`), while the reader
 * waits at the tail, and never after its response ended. Against a fake data plane and response,
 * so the timer can be short.
 */
import { type ShardClient, type ReadParams, type ReadResult, type TailEvent } from '../../../src/shards';
import { LiveWaiters } from '../../../src/gateway/kit/live-waiters';
import { type DsContext } from '../../../src/gateway/ds/context';
import { readDsSse } from '../../../src/gateway/ds/ds-sse';
import { type HttpRequest, type HttpResponse } from '../../../src/gateway/http/engine';

const page: ReadResult = { body: Buffer.alloc(0), count: 0, nextSeq: 3, tailSeq: 3, startSeq: 0, upToDate: true, closed: false, streamId: 7, contentType: 'application/octet-stream', fork: null };

/** The data plane: every read is the empty tail of stream 7; a watch never answers. */
const shards = {
  read: (_p: ReadParams): Promise<ReadResult> => Promise.resolve(page),
  recycle: (): void => undefined,
  watch: (): Promise<TailEvent> => new Promise<TailEvent>(() => undefined),
  unwatch: (): Promise<void> => Promise.resolve(),
  onTail: (): void => undefined,
};

/** The response: what was written, and a client that can leave. */
class FakeResponse {
  writes: string[] = [];
  aborted = false;
  ended = false;
  #onAborted: (() => void) | null = null;
  writeHead(): void {}
  write(chunk: string | Uint8Array): boolean {
    this.writes.push(String(chunk));
    return true;
  }
  onWritable(): void {}
  onAborted(cb: () => void): void {
    this.#onAborted = cb;
  }
  end(): void {
    this.ended = true;
  }
  leave(): void {
    this.aborted = true;
    this.#onAborted?.();
  }
  keepAlives(): number {
    return this.writes.filter((w) => w === ': keep-alive\n\n').length;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('an SSE reader waiting at the tail gets keep-alive comments on the registry timer, and none after it left', async () => {
  const live = new LiveWaiters(shards, { longPollTimeoutMs: 10_000, keepAliveMs: 40 });
  const ctx = { shards: shards as unknown as ShardClient, live, maxRecordBytes: 1 << 20, maxStreamNameBytes: 1024, readBytes: 1 << 20, sseReconnectMs: 60_000, subscriptions: null } satisfies DsContext;
  const res = new FakeResponse();
  const done = readDsSse(ctx, '/s', 'raw', { seq: -1, offsetNow: true, live: 'sse', cursor: undefined }, {} as HttpRequest, res as unknown as HttpResponse);
  try {
    await sleep(300);
    // The control event first, then comments while nothing comes.
    expect(res.writes[0]).toContain('event: control');
    expect(res.keepAlives()).toBeGreaterThanOrEqual(3);
    res.leave();
    await done;
    expect(res.ended).toBe(false); // the client left: nothing is written to end it
    const after = res.keepAlives();
    await sleep(200);
    expect(res.keepAlives()).toBe(after);
  } finally {
    live.shutdown();
  }
});
