/**
 * appliedIndex (spec "Cluster overview": grows with all activity, including background work)
 * moves with creates, appends (their checkpoints), seals, trims and deletes, on /admin/cluster
 * and /ready, and does not move backwards across a restart.
 */
import { CHECKPOINT_EVERY_MS } from '../../src/shards/worker/checkpointer';
import { startNode, tempDir } from '../helpers/node-process';

jest.setTimeout(60_000);

const ARGS = ['--shards', '2', '--shard-workers', '1'];

async function cluster(adminUrl: string): Promise<number> {
  return ((await (await fetch(adminUrl + '/admin/cluster')).json()) as { appliedIndex: number }).appliedIndex;
}

async function settle(): Promise<void> {
  // Past the shard's checkpoint interval.
  await new Promise((r) => setTimeout(r, CHECKPOINT_EVERY_MS + 300));
}

describe('appliedIndex', () => {
  it('grows with creates, appends, seals, trims and deletes, and survives a restart', async () => {
    const dataDir = tempDir();
    let node = await startNode({ dataDir, args: ARGS });
    const admin = node.adminUrl!;
    const seen = [await cluster(admin)];
    const step = async (what: () => Promise<unknown>): Promise<void> => {
      await what();
      await settle();
      const now = await cluster(admin);
      expect(now).toBeGreaterThan(seen[seen.length - 1]!);
      seen.push(now);
    };
    await step(() => fetch(node.url + '/a', { method: 'PUT', headers: { 'content-type': 'text/plain' } }));
    await step(() => fetch(node.url + '/a', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }));
    await step(() => fetch(node.url + '/a', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'y' }));
    await step(async () => expect((await fetch(node.url + '/a', { method: 'POST', headers: { 'svc-trim-seq': '1' } })).status).toBe(200));
    await step(() => fetch(node.url + '/b', { method: 'PUT', headers: { 'content-type': 'text/plain' } }));
    await step(async () => expect((await fetch(node.url + '/b', { method: 'POST', headers: { 'svc-closed': 'true' } })).status).toBe(200));
    await step(async () => expect((await fetch(node.url + '/b', { method: 'DELETE' })).status).toBe(204));
    // /ready shows the same figure (its shard part refreshed every second).
    await new Promise((r) => setTimeout(r, 1200));
    const ready = ((await (await fetch(admin + '/ready')).json()) as { appliedIndex: number }).appliedIndex;
    expect(ready).toBe(seen[seen.length - 1]);

    const last = seen[seen.length - 1]!;
    expect(await node.stop()).toBe(0);
    node = await startNode({ dataDir, args: ARGS });
    // A restart adds the node's own metadata command (its new epoch); nothing goes backwards.
    expect(await cluster(node.adminUrl!)).toBeGreaterThan(last);
    await node.stop();
  });
});
