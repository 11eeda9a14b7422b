/** The data-plane side of the `__ds` subscription APIs: tails, and appends to wake streams. */
import { SvcError } from '../../errors';
import { type ShardClient } from '../../shards';
import { type SubscriptionHost } from './subscriptions';
import { formatOffset } from './offsets';

export function createSubscriptionHost(shards: ShardClient): SubscriptionHost {
  return {
    async tailOffset(path: string): Promise<string | null> {
      try {
        return formatOffset((await shards.head(`/${path}`)).nextSeq);
      } catch (err) {
        if (err instanceof SvcError && err.code === 'not_found') return null;
        throw err;
      }
    },
    async appendJson(path: string, value: unknown): Promise<void> {
      const records = [{ key: null, value: Buffer.from(JSON.stringify(value)), headers: null }];
      await shards.append({ name: `/${path}`, origin: 'ds', payload: { kind: 'records', records }, contentType: 'application/json', close: false });
    },
    async listStreams(prefix: string): Promise<string[]> {
      const out: string[] = [];
      let startAfter = '';
      for (;;) {
        const page = await shards.list({ prefix: `/${prefix}`, startAfter, limit: 1000 });
        for (const s of page.streams) out.push(s.name.slice(1));
        if (!page.hasMore || page.streams.length === 0) return out;
        startAfter = page.streams[page.streams.length - 1]!.name;
      }
    },
  };
}
