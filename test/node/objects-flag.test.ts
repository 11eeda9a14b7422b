/**
 * `--objects` at start (docs/config.md): refused with local metadata (the object ledger lives in
 * etcd) and for a URL the node cannot use; with etcd metadata and no `--objects`, one warning
 * that a dead owner's streams wait for it; an object store that refuses a test object stops the start.
 */
import { EtcdCluster } from '../helpers/etcd-cluster';
import { startNode, tempDir } from '../helpers/node-process';

jest.setTimeout(60_000);

test('refuses --objects with local metadata, and an objects URL it cannot use', async () => {
  await expect(startNode({ args: ['--objects', `file:${tempDir('svc-objects-')}`] })).rejects.toThrow('--objects: --objects needs --metadata etcd://…');
  await expect(startNode({ env: { SVC_OBJECTS: 's3://no_such/bucket' } })).rejects.toThrow(/SVC_OBJECTS: objects URL "s3:\/\/no_such\/bucket": bucket "no_such" is not a valid S3 bucket name/);
});

describe('with etcd metadata', () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await EtcdCluster.start(1);
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  test('warns once at start when there is no object store, and not when there is one', async () => {
    const without = await startNode({ args: ['--metadata', etcd.url('objects-flag-a')] });
    const warnings = without.output().split('\n').filter((l) => l.includes('without --objects'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"level":(40|"warn")/);
    expect(warnings[0]).toContain("stream data stays on its owner's disk");
    await without.stop();
    const withObjects = await startNode({ args: ['--metadata', etcd.url('objects-flag-b'), '--objects', `file:${tempDir('svc-objects-')}`] });
    expect(withObjects.output()).not.toContain('without --objects');
    await withObjects.stop();
  });

  test('does not start on an object store that refuses a test object, and says why', async () => {
    const missing = `${tempDir('svc-objects-')}/not-mounted`;
    await expect(startNode({ args: ['--metadata', etcd.url('objects-flag-c'), '--objects', `file:${missing}`] })).rejects.toThrow(
      /--objects: the object store refused a test object \(NoSuchStore\): object store file:.*not-mounted: the directory does not exist/,
    );
  });

  test('the object ledger\'s format is the cluster\'s: the first node writes it, the others take it, and one that names the other does not start', async () => {
    const objects = `file:${tempDir('svc-objects-')}`;
    const first = await startNode({ args: ['--metadata', etcd.url('objects-flag-d'), '--objects', objects, '--objects-ledger', 'entries'] });
    expect(first.output()).toMatch(/"format":"entries","written":true.*object ledger format chosen for the cluster/);
    await first.stop();
    const again = await startNode({ args: ['--metadata', etcd.url('objects-flag-d'), '--objects', objects] });
    expect(again.output()).toMatch(/"format":"entries","written":false/);
    await again.stop();
    await expect(startNode({ args: ['--metadata', etcd.url('objects-flag-d'), '--objects', objects, '--objects-ledger', 'records'] })).rejects.toThrow(
      /--objects-ledger records: the cluster's object ledger is in the entries format, and every node of a cluster runs the same one; start with --objects-ledger cluster \(or entries\)/,
    );
    // A new cluster of nodes that name none is in the records format, and stays so.
    const newer = await startNode({ args: ['--metadata', etcd.url('objects-flag-e'), '--objects', `file:${tempDir('svc-objects-')}`] });
    expect(newer.output()).toMatch(/"format":"records","written":true/);
    await newer.stop();
    const follower = await startNode({ args: ['--metadata', etcd.url('objects-flag-e'), '--objects', `file:${tempDir('svc-objects-')}`] });
    expect(follower.output()).toMatch(/"format":"records","written":false/);
    await follower.stop();
  });
});
