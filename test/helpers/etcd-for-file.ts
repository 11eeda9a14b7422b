/**
 * One etcd member for a whole test file and a link to it: started before the file's tests,
 * stopped after them. Read `etcd.link` inside tests (it exists from beforeAll on).
 */
import { EtcdLink } from '../../src/actors';
import { EtcdCluster } from './etcd-cluster';

export function etcdForFile(): { readonly link: EtcdLink } {
  let cluster: EtcdCluster | undefined;
  let link: EtcdLink | undefined;
  beforeAll(async () => {
    cluster = await EtcdCluster.start(1);
    link = new EtcdLink(cluster.endpoints, { access: cluster.access() });
  }, 60_000);
  afterAll(async () => {
    link?.close();
    await cluster?.stop();
  });
  return {
    get link(): EtcdLink {
      if (link === undefined) throw new Error('etcdForFile: the link exists only once beforeAll ran');
      return link;
    },
  };
}
