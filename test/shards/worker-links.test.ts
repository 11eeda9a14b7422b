/**
 * Gateway threads' channels to the shard workers (shards/worker-links.ts, `ShardClient.linkClient`):
 * a second client, linked by the main thread's, calls the same workers over channels of its own;
 * each client gets the replies to its own calls and the tail events of the streams it watches,
 * and nothing of the other's. Real workers from dist/ (import-fixture.ts).
 */
import type * as Shards from '../../src/shards';
import { tempDir } from '../helpers/node-process';
import { type ShardClient, createStream, rec, startShards } from './helpers/import-fixture';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dist = require('../../dist/shards') as typeof Shards;

const append = (c: ShardClient, name: string, values: string[]): Promise<Shards.AppendResult> =>
  c.append({ name, origin: 'http', payload: { kind: 'records', records: values.map((v) => rec(v)) }, contentType: null, close: false });

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((res) => setTimeout(res, 20));
  expect(check()).toBe(true);
}

describe('a linked client', () => {
  test('calls every worker over its own channels and gets only its own watches\' tail events', async () => {
    const main: ShardClient = await startShards(tempDir(), 4, 2);
    const links = new dist.PortLinks(2);
    const { unlink } = main.linkClient({ port: (w, p) => links.linked(w, p), down: (w, why) => links.down(w, why) });
    const other = dist.ShardClient.overLinks(links, main.shardCount);
    try {
      const mainTails: string[] = [];
      const otherTails: string[] = [];
      main.onTail((es) => mainTails.push(...es.map((e) => `${e.name}@${e.nextSeq}`)));
      other.onTail((es) => otherTails.push(...es.map((e) => `${e.name}@${e.nextSeq}`)));
      const names = ['/a', '/b', '/c', '/d', '/e', '/f'];
      for (const n of names) await createStream(other, n);
      // Both clients append to the same streams; seqs interleave, one order per stream.
      const seqs = await Promise.all(names.flatMap((n) => [append(main, n, ['m']), append(other, n, ['o'])]));
      for (let i = 0; i < names.length; i++) expect([seqs[2 * i]!.startSeq, seqs[2 * i + 1]!.startSeq].sort()).toEqual([0, 1]);

      expect((await other.watch('/a')).nextSeq).toBe(2);
      expect((await main.watch('/b')).nextSeq).toBe(2);
      await append(main, '/a', ['x']);
      await append(other, '/b', ['y']);
      await until(() => otherTails.includes('/a@3') && mainTails.includes('/b@3'));
      expect(otherTails).not.toContain('/b@3');
      expect(mainTails).not.toContain('/a@3');

      // Both watch /c; one unwatches and the other still gets its events.
      await other.watch('/c');
      await main.watch('/c');
      await other.unwatch('/c');
      await append(other, '/c', ['z']);
      await until(() => mainTails.includes('/c@3'));
      expect(otherTails).not.toContain('/c@3');

      const r = await other.read({ name: '/a', seq: 0, format: 'raw', bytes: 1 << 20, count: 100 });
      expect(r.count).toBe(3);
    } finally {
      unlink();
      await other.close();
      links.close();
      await main.close();
    }
  });
});
