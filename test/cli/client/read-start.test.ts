/**
 * Where `read` and `tail` start (docs/cli.md, "Streams"): `read --last`, `--since` (a time, unix
 * ms or a duration ago, found by bisecting the seqs), and several streams in one `tail`, each
 * record labelled with its stream and each stream with its own named offset.
 */
import { startNode, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, svc } from '../../helpers/svc-cli';

jest.setTimeout(60_000);

let node: NodeProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode();
  env = clientEnv({ SVC_URL: node.url });
});

async function append(stream: string, bodies: string[]): Promise<void> {
  const res = await fetch(node.url + stream, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: bodies.map((body) => ({ body })) }) });
  expect(res.status).toBe(200);
}

async function create(stream: string): Promise<void> {
  expect((await fetch(node.url + stream, { method: 'PUT' })).status).toBe(201);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r${from + i}`);

async function committed(stream: string, group: string): Promise<number | null> {
  const res = await fetch(`${node.url}/_offsets${stream}?group=${group}`);
  return ((await res.json()) as { seq: number | null }).seq;
}

test('read --last N and --since start where they say', async () => {
  await create('/grp/since');
  await append('/grp/since', range(0, 10));
  const cut = Date.now();
  await new Promise((r) => setTimeout(r, 30)); // a millisecond clock: the next append is later
  await append('/grp/since', range(10, 13));
  expect((await svc(['read', '/grp/since', '--last', '2'], { env })).stdout).toBe('r11\nr12\n');
  expect((await svc(['read', '/grp/since', '--since', new Date(cut + 1).toISOString()], { env })).stdout).toBe('r10\nr11\nr12\n');
  expect((await svc(['read', '/grp/since', '--since', '1h'], { env })).stdout.split('\n').filter(Boolean)).toHaveLength(13);
  expect((await svc(['tail', '/grp/since', '--since', String(cut + 1), '-c', '3'], { env })).stdout).toBe('r10\nr11\nr12\n');
  const both = await svc(['read', '/grp/since', '--last', '2', '--seq', '0'], { env });
  expect([both.code, both.stderr]).toEqual([2, 'svc: --seq and --last both say where to start: give one\n']);
});

test('tail follows several streams at once, each line labelled with its stream', async () => {
  await create('/grp/x');
  await create('/grp/y');
  await append('/grp/x', ['x0']);
  await append('/grp/y', ['y0', 'y1']);
  const raw = await svc(['tail', '/grp/x', '/grp/y', '--seq', '0', '-c', '3'], { env });
  expect(raw.code).toBe(0);
  expect(raw.stdout.split('\n').filter(Boolean).sort()).toEqual(['/grp/x: x0', '/grp/y: y0', '/grp/y: y1']);
  // JSON lines carry the stream; each stream keeps its own named offset.
  const json = await svc(['tail', '/grp/x', '/grp/y', '--seq', '0', '-c', '3', '-f', 'json', '--group', 'multi'], { env });
  const rows = json.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { stream: string; body: string });
  expect(rows.map((r) => `${r.stream} ${r.body}`).sort()).toEqual(['/grp/x x0', '/grp/y y0', '/grp/y y1']);
  expect([await committed('/grp/x', 'multi'), await committed('/grp/y', 'multi')]).toEqual([1, 2]);
});
