/**
 * One node in objects mode for a whole test file: a one-member etcd (Debian etcd-server), a `svc
 * serve` process from dist/ with `--metadata etcd://…` on a fresh prefix and `--objects
 * file:<dir>`, and the test's own view of the same ledger and store. Started before the file's
 * tests, stopped after them; read the fields inside tests (they exist from beforeAll on).
 */
import { randomBytes } from 'node:crypto';
import { EtcdLink } from '../../src/actors';
import { Ledger, type ObjectStore, openObjectStore } from '../../src/objects';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

export interface ObjectsNode {
  etcd: EtcdCluster;
  node: NodeProcess;
  link: EtcdLink;
  ledger: Ledger;
  store: ObjectStore;
  objectsDir: string;
}

export function objectsNodeForFile(o: { shards: number; env?: NodeJS.ProcessEnv }): ObjectsNode {
  const c = {} as ObjectsNode;
  beforeAll(async () => {
    c.etcd = await EtcdCluster.start(1);
    const prefix = `objects/${randomBytes(4).toString('hex')}`;
    c.objectsDir = tempDir('svc-objects-');
    c.node = await startNode({
      args: ['--metadata', c.etcd.url(prefix), '--objects', `file:${c.objectsDir}`, '--shards', String(o.shards), '--shard-workers', '1'],
      ...(o.env === undefined ? {} : { env: o.env }),
    });
    c.link = new EtcdLink(c.etcd.endpoints, { access: c.etcd.access() });
    c.ledger = new Ledger(c.link, prefix);
    c.store = openObjectStore(`file:${c.objectsDir}`);
  }, 90_000);
  afterAll(async () => {
    await c.node?.stop();
    c.link?.close();
    await c.store?.close();
    await c.etcd?.stop();
  });
  return c;
}
