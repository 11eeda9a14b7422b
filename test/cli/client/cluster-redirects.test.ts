/**
 * The real `svc` binary against a real 3-node cluster (3 etcd members, 3 nodes, auth required),
 * pointed at one node for streams the other two own (docs/cli.md "Redirects", docs/cluster.md):
 * every command is answered 307 by the node it talks to and succeeds at the owner, which only
 * works if the client re-sends Authorization on the hop (the owner refuses a request without
 * it). `--max-redirects 0` refuses the hop with a message naming it. A redirect loop between two
 * servers is bounded; a real cluster never loops, so that case uses two tiny node:http servers.
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { type NodeProcess } from '../../helpers/node-process';
import { clientEnv, spawnSvc, svc } from '../../helpers/svc-cli';
import { startCluster, type TestCluster } from '../../helpers/svc-cluster';

// Each test runs a few dozen `svc` processes (a quarter to half a second each to start on a
// loaded machine) against a 3-node cluster: the budget is generous so a busy CI worker is not a failure.
jest.setTimeout(120_000);

let cluster: TestCluster;
/** The node the client is pointed at (node 1), and a stream on each other node (2 and 3), which it does not own. */
let entry: NodeProcess;
const entryId = 1;
const streams = new Map<number, string>();
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  cluster = await startCluster();
  entry = cluster.byId.get(entryId)!;
  for (const want of [2, 3]) {
    for (let i = 0; ; i++) {
      const name = `/cli/n${want}-${i}`;
      if (cluster.placedOn(name) === want) {
        streams.set(want, name);
        break;
      }
    }
  }
  env = clientEnv({ SVC_URL: entry.url, SVC_ADMIN_URL: entry.adminUrl!, SVC_TOKEN: cluster.token });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The entry node answers `path` with 307 to the owner (so the command's success went through a hop). */
async function expectRedirected(name: string, owner: NodeProcess): Promise<void> {
  const r = await fetch(`${entry.url}${name}`, { method: 'HEAD', headers: cluster.auth, redirect: 'manual' });
  expect(r.status).toBe(307);
  expect(r.headers.get('location')).toBe(`${owner.url}${name}`);
}

test.each([2, 3])('create, append (argument and stdin), read, tail and rm of a stream node %i owns, all through 307', async (want) => {
  const name = streams.get(want)!;
  const ownerId = cluster.placedOn(name);
  const owner = cluster.byId.get(ownerId)!;
  expect(ownerId).not.toBe(entryId);

  const created = await svc(['create', name, '-t', 'text/plain'], { env });
  expect([created.code, created.stderr]).toEqual([0, '']);
  expect(await cluster.ownerOf(name)).toBe(ownerId);
  await expectRedirected(name, owner);

  // The owner refuses the same request without a token: success below means the hop carried it.
  expect((await fetch(`${owner.url}${name}`, { method: 'HEAD' })).status).toBe(401);

  expect((await svc(['append', name, 'first'], { env })).code).toBe(0);
  // 20,000 lines on stdin in batches of 1000: 20 POSTs, each redirected and re-authorized.
  const lines = Array.from({ length: 20_000 }, (_, i) => `line-${i}`);
  const piped = await svc(['append', name, '--batch-records', '1000', '-o', 'json'], { env, input: lines.join('\n') + '\n' });
  expect(piped.code).toBe(0);
  expect(JSON.parse(piped.stdout)).toMatchObject({ records: 20_000, firstSeq: 1, nextSeq: 20_001 });

  const read = await svc(['read', name], { env });
  expect(read.code).toBe(0);
  expect(read.stdout).toBe(['first', ...lines].join('\n') + '\n');
  const page = await svc(['read', name, '--seq', '20000', '-o', 'json'], { env });
  expect(JSON.parse(page.stdout.trim())).toMatchObject({ seq: 20_000, body: 'line-19999' });

  // A live tail (SSE) through the redirect: the records appended after it started, in order.
  const tail = spawnSvc(['tail', name, '--seq', '20001', '-c', '3'], { env });
  for (const body of ['live-a', 'live-b', 'live-c']) expect((await svc(['append', name, body], { env })).code).toBe(0);
  const tailed = await tail.result;
  expect([tailed.code, tailed.stdout]).toEqual([0, 'live-a\nlive-b\nlive-c\n']);

  const head = await svc(['head', name, '-o', 'json'], { env });
  expect(JSON.parse(head.stdout)).toMatchObject({ nextSeq: 20_004 });

  expect((await svc(['rm', name], { env })).code).toBe(0);
  // Gone cluster-wide: the entry node no longer redirects, and the client says not found (exit 4).
  const after = await svc(['head', name], { env });
  expect(after.code).toBe(4);
  expect((await fetch(`${owner.url}${name}`, { method: 'HEAD', headers: cluster.auth })).status).toBe(404);
});

test('--max-redirects 0 refuses the hop with a message naming where it would have gone (exit 1)', async () => {
  let name = '';
  for (let i = 0; name === ''; i++) if (cluster.placedOn(`/cli/nohop${i}`) !== entryId) name = `/cli/nohop${i}`;
  expect((await svc(['create', name], { env })).code).toBe(0);
  const owner = cluster.byId.get(await cluster.ownerOf(name))!;
  expect(owner).not.toBe(entry);
  const r = await svc(['append', name, 'x', '--max-redirects', '0'], { env });
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`svc: POST ${name}: more than 0 redirects (last to ${owner.url}${name})\n`);
  // Nothing was written, and the same from the environment variable.
  const viaEnv = await svc(['read', name], { env: { ...env, SVC_MAX_REDIRECTS: '0' } });
  expect(viaEnv.code).toBe(1);
  expect(viaEnv.stderr).toMatch(/more than 0 redirects/);
  expect((await svc(['read', name], { env })).stdout).toBe('');
  // A refused hop is an answer, not a lost connection: `tail` does not reconnect for ever.
  const tail = await svc(['tail', name, '--seq', '0', '--max-redirects', '0'], { env, timeoutMs: 10_000 });
  expect([tail.code, tail.stderr]).toEqual([1, `svc: GET ${name}?seq=0&live=sse: more than 0 redirects (last to ${owner.url}${name}?seq=0&live=sse)\n`]);
  // One hop allowed is enough in a cluster: the entry node points straight at the owner.
  expect((await svc(['append', name, 'y', '--max-redirects', '1'], { env })).code).toBe(0);
  expect((await svc(['read', name], { env })).stdout).toBe('y\n');
});

test('a redirect loop between two servers stops after --max-redirects hops, the token sent on each', async () => {
  const seen: Array<{ server: string; auth: string | undefined }> = [];
  const servers: http.Server[] = [];
  const urls: string[] = [];
  for (const label of ['a', 'b']) {
    const other = label === 'a' ? 1 : 0;
    const server = http.createServer((req, res) => {
      seen.push({ server: label, auth: req.headers.authorization });
      res.writeHead(307, { location: `${urls[other]!}${req.url!}` }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  try {
    const t0 = Date.now();
    const r = await svc(['append', '/loop', 'x'], { env: { ...env, SVC_URL: urls[0]! }, timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc: POST \/loop: more than 5 redirects \(last to http:\/\/127\.0\.0\.1:\d+\/loop\)\n$/);
    expect(Date.now() - t0).toBeLessThan(15_000);
    // The first request and 5 hops, alternating, each with the token.
    expect(seen.map((s) => s.server)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    for (const s of seen) expect(s.auth).toBe(`Bearer ${cluster.token}`);
    seen.length = 0;
    const r3 = await svc(['head', '/loop', '--max-redirects', '2'], { env: { ...env, SVC_URL: urls[1]! } });
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/more than 2 redirects/);
    expect(seen.map((s) => s.server)).toEqual(['b', 'a', 'b']);
  } finally {
    for (const s of servers) s.close();
  }
});

test('tail --group commits through the redirect, and a run through another node resumes from it', async () => {
  let name = '';
  for (let i = 0; name === ''; i++) if (cluster.placedOn(`/cli/grp${i}`) !== entryId) name = `/cli/grp${i}`;
  expect((await svc(['create', name], { env })).code).toBe(0);
  const appended = await svc(['append', name, '-'], { env, input: 'a\nb\nc\n' });
  expect([appended.code, appended.stderr]).toEqual([0, '']);
  const first = await svc(['tail', name, '--group', 'g', '--seq', '0', '-c', '2'], { env });
  expect([first.code, first.stdout, first.stderr]).toEqual([0, 'a\nb\n', '']);
  // The third node (neither the entry nor the owner) redirects as well; the position is the group's, not a connection's.
  const third = cluster.nodes.find((n) => n !== entry && n !== cluster.byId.get(cluster.placedOn(name)))!;
  const again = await svc(['tail', name, '--group', 'g', '-c', '1'], { env: { ...env, SVC_URL: third.url } });
  expect([again.code, again.stdout, again.stderr]).toEqual([0, 'c\n', '']);
  const doc = await (await fetch(`${third.url}/_offsets${name}?group=g`, { headers: cluster.auth, redirect: 'manual' })).status;
  expect(doc).toBe(307);
});
