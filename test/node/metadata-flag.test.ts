/**
 * `--metadata`: a URL that is not `local` or `etcd://host:port[,…]/<prefix>` is a configuration
 * error, and a node whose etcd cannot be reached stops at startup with a message that names it
 * (after the 10 s metadata deadline) instead of serving without metadata.
 */
import { freePort } from '../helpers/etcd-cluster';
import { startNode } from '../helpers/node-process';

jest.setTimeout(60_000);

test('refuses a metadata URL that is neither local nor etcd://…/<prefix>', async () => {
  await expect(startNode({ args: ['--metadata', 'etcd://127.0.0.1:2379'] })).rejects.toThrow('--metadata: must be local or etcd://host:port[,host:port...]/<prefix>');
  await expect(startNode({ env: { SVC_METADATA: 'zookeeper://x/y' } })).rejects.toThrow('SVC_METADATA: must be local or etcd://');
});

test('stops at startup, naming the members, when no etcd member answers', async () => {
  const port = await freePort(); // nothing listens there
  const t0 = Date.now();
  await expect(startNode({ args: ['--metadata', `etcd://127.0.0.1:${port}/svc`] })).rejects.toThrow(`cannot open the etcd metadata store at etcd://127.0.0.1:${port}/svc`);
  expect(Date.now() - t0).toBeLessThan(30_000);
});
