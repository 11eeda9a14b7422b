/**
 * The failover test with every node on `--objects-reads copy` (docs/objects.md, "Reads from the
 * object store"): the new owner copies each moved stream's frames from the object store into its
 * local log before it serves it, instead of adopting it from the ledger (the default, which
 * failover.test.ts runs). Same rounds as failover.test.ts (failover-rounds.ts);
 * FAILOVER_COPY_ROUNDS rounds (default 4).
 */
import { ObjectsCluster } from './objects-cluster';
import { type Writer } from './writers';
import { failoverRounds, startWriters } from './failover-rounds';
import { runAlone } from '../helpers/run-alone';

const ROUNDS = Number(process.env['FAILOVER_COPY_ROUNDS'] ?? 4);
// About 15 s a round alone, twice that on a loaded CI worker; the bound that matters is each round's 10 s.
jest.setTimeout(Math.max(240_000, 60_000 + ROUNDS * 40_000));

let c: ObjectsCluster;
let writers: Writer[] = [];

// A latency bound on a whole cluster: not beside another such suite (run-alone.ts).
runAlone();

beforeAll(async () => {
  // A 3 s liveness lease: a dead node is seen gone after at most 3 s (the default is 5).
  c = await ObjectsCluster.start(['--node-lease-ttl', '3', '--objects-reads', 'copy']);
  writers = await startWriters(c, 'fr');
}, 120_000);
afterAll(async () => {
  await Promise.all(writers.map((w) => w.stop()));
  await c?.stop();
});

test(`on copied opens, the owner of the busiest streams is killed and wiped ${ROUNDS} times: its streams are served elsewhere within 10 s with every acknowledged record`, async () => {
  expect(await failoverRounds(c, writers, ROUNDS)).toHaveLength(ROUNDS);
});
