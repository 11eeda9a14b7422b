/**
 * The failover test with `s3://` objects, the three programs together: the nodes' object store is
 * svc-cache (static credentials of its own), which forwards every write, listing and miss to a
 * real S3 server (s3rver from npm, behind a shim that checks each request's SigV4 signature with
 * the AWS SDK's signer, test/s3/fixtures/origin-server.js), re-signed with the origin's
 * credentials. Same rounds as failover.test.ts (failover-rounds.ts); S3_FAILOVER_ROUNDS rounds
 * (default 3), on the default liveness lease (S3_FAILOVER_LEASE_TTL seconds otherwise). Ends by
 * checking the origin refused no request and holds the nodes' objects.
 */
import { ObjectsCluster } from './objects-cluster';
import { type Writer } from './writers';
import { failoverRounds, startWriters } from './failover-rounds';
import { startCache, type TestCache } from '../s3/helpers/cache-server';
import { type TestOrigin, startOrigin } from '../s3/helpers/origin';
import { runAlone } from '../helpers/run-alone';

const ROUNDS = Number(process.env['S3_FAILOVER_ROUNDS'] ?? 3);
// About 15 s a round alone, twice that on a loaded CI worker; the bound that matters is each round's 10 s.
jest.setTimeout(Math.max(240_000, 60_000 + ROUNDS * 40_000));
const BUCKET = 'svc-cluster';
const AK = 'svc-nodes';
const SK = 'svc-nodes-secret';

let origin: TestOrigin;
let cache: TestCache;
let c: ObjectsCluster;
let writers: Writer[] = [];

// A latency bound on a whole cluster: not beside another such suite (run-alone.ts).
runAlone();

beforeAll(async () => {
  origin = await startOrigin([BUCKET]);
  cache = await startCache(origin, { auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
  // The node's default liveness lease (5 s) unless S3_FAILOVER_LEASE_TTL says otherwise: the
  // issue's bound (failover with s3:// within 10 s) is for a node as it ships.
  const ttl = process.env['S3_FAILOVER_LEASE_TTL'];
  c = await ObjectsCluster.start(ttl === undefined ? [] : ['--node-lease-ttl', ttl], {
    url: `s3://${BUCKET}/cluster?endpoint=${cache.url}&region=us-east-1`,
    env: { AWS_ACCESS_KEY_ID: AK, AWS_SECRET_ACCESS_KEY: SK },
  });
  writers = await startWriters(c, 'fs');
}, 120_000);
afterAll(async () => {
  await Promise.all(writers.map((w) => w.stop()));
  await c?.stop();
  await cache?.stop();
  await origin?.stop();
});

test(`s3:// through svc-cache: the owner of the busiest streams is killed and wiped ${ROUNDS} times, its streams served elsewhere within 10 s with every acknowledged record`, async () => {
  expect(await failoverRounds(c, writers, ROUNDS)).toHaveLength(ROUNDS);
  const s = await origin.stats();
  expect(s.rejected).toBe(0);
  // The group objects reached the origin through svc-cache (PUTs the shim verified).
  expect(s.byMethod['PUT'] ?? 0).toBeGreaterThan(0);
});
