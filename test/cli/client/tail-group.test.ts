/**
 * `svc tail --group` (named offsets, docs/cli.md "Resuming a tail"): a tail that is killed
 * (SIGKILL, no chance to clean up) and run again continues after the last record it committed,
 * so nothing appended meanwhile is lost and nothing it printed is printed again. Also `tail -n`:
 * the last N records, then follow.
 */
import { startNode, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, spawnSvc, svc } from '../../helpers/svc-cli';

jest.setTimeout(60_000);

let node: NodeProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode();
  env = clientEnv({ SVC_URL: node.url });
});

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function append(stream: string, bodies: string[]): Promise<void> {
  const res = await fetch(node.url + stream, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: bodies.map((body) => ({ body })) }) });
  expect(res.status).toBe(200);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r${from + i}`);
const seqsOf = (out: string) => out.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);

async function committed(stream: string, group: string): Promise<number | null> {
  const res = await fetch(`${node.url}/_offsets${stream}?group=${group}`);
  return ((await res.json()) as { seq: number | null }).seq;
}

test('tail --group killed with SIGKILL and run again loses and repeats nothing, with 1,000 records appended while it was down', async () => {
  await svc(['create', '/grp/a'], { env });
  await append('/grp/a', range(0, 10)); // before the group's first run: a new group starts at now
  const first = spawnSvc(['tail', '/grp/a', '--group', 'billing', '-f', 'json'], { env });
  // A new group starts at now: probe until the tail is connected and prints.
  await waitFor(async () => {
    await append('/grp/a', ['probe']);
    await new Promise((r) => setTimeout(r, 200));
    return first.stdout() !== '';
  }, 'the tail to connect');
  await append('/grp/a', range(10, 110));
  const before = () => seqsOf(first.stdout());
  const last = async () => Number(((await (await fetch(node.url + '/grp/a', { method: 'HEAD' })).headers.get('svc-next-seq')) ?? 0));
  const tailEnd = await last();
  await waitFor(() => before()[before().length - 1] === tailEnd - 1, 'every record printed');
  // The commit point: after printing. Once the node holds the position after the last record
  // printed, a kill loses nothing and repeats nothing.
  await waitFor(async () => (await committed('/grp/a', 'billing')) === tailEnd, 'the commit of the last record printed');
  first.proc.kill('SIGKILL');
  await first.result;

  await append('/grp/a', range(110, 1110)); // 1,000 records while no tail runs
  const second = await svc(['tail', '/grp/a', '--group', 'billing', '-f', 'json', '-c', '1000'], { env });
  expect([second.code, second.stderr]).toEqual([0, '']);
  const after = seqsOf(second.stdout);
  expect(after).toEqual(Array.from({ length: 1000 }, (_, i) => tailEnd + i));
  // Together: every seq from the first one printed to the end, each exactly once.
  const all = [...before(), ...after];
  expect(new Set(all).size).toBe(all.length);
  expect(all).toEqual(Array.from({ length: all.length }, (_, i) => all[0]! + i));
  expect(all[all.length - 1]).toBe((await last()) - 1);
  expect(await committed('/grp/a', 'billing')).toBe(tailEnd + 1000);
  // Another group has its own position: it starts at now, not where billing is.
  expect(await committed('/grp/a', 'audit')).toBeNull();
});

test('tail --group stopped by Ctrl-C commits what it printed and exits 130', async () => {
  await svc(['create', '/grp/int'], { env });
  await append('/grp/int', range(0, 50));
  const tail = spawnSvc(['tail', '/grp/int', '--group', 'ops', '--seq', '0'], { env });
  await waitFor(() => tail.stdout().split('\n').filter(Boolean).length === 50, 'the records');
  tail.proc.kill('SIGINT');
  const r = await tail.result;
  expect([r.code, r.stderr]).toEqual([130, '']);
  expect(await committed('/grp/int', 'ops')).toBe(50);
});

test('tail -n 5 prints exactly the last 5 records, then follows; no resume message when it stops', async () => {
  await svc(['create', '/grp/n'], { env });
  await append('/grp/n', range(0, 20));
  const tail = spawnSvc(['tail', '/grp/n', '-n', '5', '-c', '7'], { env });
  await waitFor(() => tail.stdout().split('\n').filter(Boolean).length === 5, 'the last 5');
  expect(tail.stdout()).toBe(range(15, 20).join('\n') + '\n');
  await append('/grp/n', ['new1', 'new2']);
  const r = await tail.result;
  expect([r.code, r.stdout, r.stderr]).toEqual([0, [...range(15, 20), 'new1', 'new2'].join('\n') + '\n', '']);
});
