/** A complete answer to a request, as every HTTP listener's handlers return it and write it. */
import { type BodyDone, type HeaderList } from '../http/engine';
import { type ShardClient } from '../../shards';

export interface Reply {
  status: number;
  headers: HeaderList;
  /** Parts only for a read page made of the read cache's views (ReadResult.parts). */
  body?: string | Buffer | readonly Buffer[];
  /**
   * Passed to `HttpResponse.send` with the body: called once the engine has finished with it
   * (a read page's buffer goes back to its shard worker); called too when the body is never
   * given to the engine (the client left first). Absent: the body is left to the GC.
   */
  bodyDone?: BodyDone;
}

/**
 * `reply`, whose body is the page `page` read for this request alone (not a page shared with
 * other readers, as live reads share them), with its buffer handed back to the shard worker
 * once the response has sent it (ShardClient.recycle; docs/storage.md, "Read page buffers").
 */
export function recycling(reply: Reply, shards: ShardClient, page: Buffer | readonly Buffer[]): Reply {
  if (reply.body !== page) {
    // Not sent (a 304): nothing refers to the page any more.
    shards.recycle(page);
    return reply;
  }
  reply.bodyDone = () => shards.recycle(page);
  return reply;
}
