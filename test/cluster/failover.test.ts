/**
 * Failover in objects mode (docs/cluster.md, "Failover"): 3 etcd members, 3 nodes on one `file:`
 * object store, 16 clients appending; the rounds are failover-rounds.ts's. FAILOVER_ROUNDS rounds
 * (default 10).
 */
import { ObjectsCluster } from './objects-cluster';
import { type Writer } from './writers';
import { failoverRounds, startWriters } from './failover-rounds';
import { runAlone } from '../helpers/run-alone';

const ROUNDS = Number(process.env['FAILOVER_ROUNDS'] ?? 10);
// About 15 s a round alone, twice that on a loaded CI worker; the bound that matters is each round's 10 s.
jest.setTimeout(Math.max(240_000, 60_000 + ROUNDS * 40_000));

let c: ObjectsCluster;
let writers: Writer[] = [];

// A latency bound on a whole cluster: not beside another such suite (run-alone.ts).
runAlone();

beforeAll(async () => {
  // A 3 s liveness lease: a dead node is seen gone after at most 3 s (the default is 5).
  c = await ObjectsCluster.start(['--node-lease-ttl', '3']);
  writers = await startWriters(c, 'fo');
}, 120_000);
afterAll(async () => {
  await Promise.all(writers.map((w) => w.stop()));
  await c?.stop();
});

test(`the owner of the busiest streams is killed and wiped ${ROUNDS} times: its streams are served elsewhere within 10 s with every acknowledged record`, async () => {
  expect(await failoverRounds(c, writers, ROUNDS)).toHaveLength(ROUNDS);
});
