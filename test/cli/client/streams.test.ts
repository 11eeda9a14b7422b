/**
 * The real `svc` binary against a real node: stream commands, stdin piping, output formats,
 * pagination, exit codes and the server's error bodies.
 */
import { startNode, type NodeProcess } from '../../helpers/node-process';
import { execFileSync } from 'node:child_process';
import { clientEnv, SVC_BIN, svc } from '../../helpers/svc-cli';

let node: NodeProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode();
  env = clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! });
});

const run = (args: string[], input?: string | Buffer) => svc(args, { env, input });

describe('svc stream commands', () => {
  test('create --durability sets the stream\'s class; a value other than sync or async is a usage error', async () => {
    expect((await run(['create', '/cli/dur', '--durability', 'async'])).code).toBe(0);
    const r = await fetch(`${node.url}/cli/dur`, { method: 'HEAD' });
    expect(r.headers.get('svc-durability')).toBe('async');
    const bad = await run(['create', '/cli/dur2', '--durability', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--durability.*sync, async|Allowed choices are sync, async/);
    expect((await fetch(`${node.url}/cli/dur2`, { method: 'HEAD' })).status).toBe(404);
  });

  test('create, append, read, head, trim, seal and rm work end to end with their exit codes', async () => {
    expect(await run(['create', '/cli/a', '-t', 'text/plain'])).toMatchObject({ code: 0, stdout: 'created /cli/a\n' });
    expect(JSON.parse((await run(['create', 'cli/a', '-t', 'text/plain', '-o', 'json'])).stdout)).toEqual({ stream: '/cli/a', created: false, nextSeq: 0 });
    const other = await run(['create', '/cli/a', '-t', 'application/json']);
    expect(other.code).toBe(5);
    expect(other.stderr).toMatch(/409 conflict/);

    expect((await run(['append', '/cli/a', 'hello', '-k', 'k1', '-H', 'h=v'])).stdout).toBe('appended 1 record to /cli/a (seq 0..0)\n');
    expect((await run(['append', '/cli/a'], 'one\ntwo\r\nthree')).stdout).toBe('appended 3 records to /cli/a (seq 1..3)\n');

    expect((await run(['read', '/cli/a'])).stdout).toBe('hello\none\ntwo\nthree\n');
    const lines = (await run(['read', '/cli/a', '-o', 'json', '--seq', '0', '--count', '2'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ seq: 0, key: 'k1', headers: { h: 'v' }, body: 'hello' });
    const tableOut = (await run(['read', '/cli/a', '-f', 'table'])).stdout.split('\n');
    expect(tableOut[0]).toMatch(/^\s+SEQ\s+TIME\s+KEY\s+BODY$/);
    expect(tableOut[1]).toMatch(/^\s+0\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+k1\s+hello$/);

    const head = JSON.parse((await run(['head', '/cli/a', '-o', 'json'])).stdout);
    expect(head).toMatchObject({ stream: '/cli/a', startSeq: 0, nextSeq: 4, closed: false });

    expect(JSON.parse((await run(['trim', '/cli/a', '2', '-o', 'json'])).stdout)).toMatchObject({ startSeq: 2, nextSeq: 4 });
    expect((await run(['read', '/cli/a'])).stdout).toBe('two\nthree\n');
    const beyond = await run(['trim', '/cli/a', '99']);
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toMatch(/400 seq_out_of_range.*next_seq 4/);

    expect((await run(['seal', '/cli/a'])).stdout).toBe('sealed /cli/a at seq 4\n');
    const sealed = await run(['append', '/cli/a', 'late']);
    expect(sealed.code).toBe(5);
    expect(sealed.stderr).toBe('svc: POST /cli/a: 409 conflict: stream is sealed (next_seq 4)\n');
    const sealedJson = await run(['append', '/cli/a', 'late', '-o', 'json']);
    expect(JSON.parse(sealedJson.stderr)).toMatchObject({ status: 409, error: 'conflict', next_seq: 4, exitCode: 5 });

    expect((await run(['rm', '/cli/a'])).code).toBe(0);
    const gone = await run(['head', '/cli/a']);
    expect(gone.code).toBe(4);
    expect((await run(['read', '/cli/a'])).stderr).toMatch(/404 not_found/);
  });

  test('append pipes 100,000 lines from stdin in batches, and read returns every one in order', async () => {
    const input = Array.from({ length: 100_000 }, (_, i) => `line-${i}`).join('\n') + '\n';
    const res = await run(['append', '/cli/big', '--create', '-o', 'json'], input);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ stream: '/cli/big', records: 100_000, firstSeq: 0, nextSeq: 100_000, sealed: false });
    const back = await run(['read', '/cli/big']);
    expect(back.stdout).toBe(input);
    const tail = (await run(['read', '/cli/big', '-s', '99998', '-o', 'json'])).stdout.trim().split('\n').map((l) => JSON.parse(l).body);
    expect(tail).toEqual(['line-99998', 'line-99999']);
    // A reader that stops early (head) ends the read quietly with exit 0, not an EPIPE crash.
    const head = execFileSync('bash', ['-c', `"${process.execPath}" "${SVC_BIN}" read /cli/big | head -2; echo "status=\${PIPESTATUS[0]}"`], { env, encoding: 'utf8' });
    expect(head).toBe('line-0\nline-1\nstatus=0\n');
  });

  test('NUL-separated and length-prefixed stdin keep binary bodies intact', async () => {
    await run(['create', '/cli/bin']);
    expect((await run(['append', '/cli/bin', '-0'], Buffer.from('a\nb\0c\0'))).stdout).toMatch(/appended 2 records/);
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from([0xff, 0x00, 0x0a]), Buffer.from([0, 0, 0, 0])]);
    expect((await run(['append', '/cli/bin', '-d', 'length'], framed)).stdout).toMatch(/appended 2 records/);
    const recs = (await run(['read', '/cli/bin', '-f', 'json'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(recs.map((r) => r.body ?? `b64:${r.body_b64}`)).toEqual(['a\nb', 'c', `b64:${Buffer.from([0xff, 0, 0x0a]).toString('base64')}`, '']);
    const raw = await svc(['read', '/cli/bin', '-d', 'length'], { env });
    expect(raw.code).toBe(0);
    const cut = await run(['append', '/cli/bin', '-d', 'length'], Buffer.from([0, 0, 0, 9, 1]));
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/inside a length-prefixed record/);
  });

  test('ls follows every page and filters by prefix', async () => {
    for (const n of ['/ls/a', '/ls/b', '/ls/c', '/ls/d', '/ls/e', '/other']) await run(['create', n]);
    const all = JSON.parse((await run(['ls', '/ls/', '--page-size', '2', '-o', 'json'])).stdout);
    expect(all.streams.map((s: { name: string }) => s.name)).toEqual(['/ls/a', '/ls/b', '/ls/c', '/ls/d', '/ls/e']);
    const limited = JSON.parse((await run(['ls', 'ls/', '--page-size', '2', '--limit', '3', '-o', 'json'])).stdout);
    expect(limited.streams).toHaveLength(3);
    const human = (await run(['ls', '/ls/'])).stdout.split('\n');
    expect(human[0]).toMatch(/^NAME\s+CONTENT_TYPE\s+START_SEQ\s+NEXT_SEQ\s+CLOSED\s+TTL\s+EXPIRES_AT$/);
    expect(human).toHaveLength(7);
  });

  test('usage errors exit 2 and name the problem', async () => {
    const bad = await run(['read', '/x', '--count', 'many']);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toMatch(/--count must be an integer >= 0/);
    expect((await run(['create'])).code).toBe(2);
    // With -o json a usage error is one JSON object too, from the parser or from a value check.
    const missing = await run(['create', '-o', 'json']);
    expect(JSON.parse(missing.stderr)).toEqual({ status: null, error: 'usage', message: "missing required argument 'stream'", exitCode: 2 });
    expect(JSON.parse((await run(['read', '/x', '-n', 'x', '-o', 'json'])).stderr)).toMatchObject({ error: 'usage', exitCode: 2 });
    expect((await run(['read', '/x', '-o', 'yaml'])).code).toBe(2);
    const help = await run(['append', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--delimiter <framing>/);
    expect(help.stdout).toMatch(/--token <token>/); // global flags are shown too
  });

  test('schema put/get/ls/rm and config get/patch', async () => {
    const schema = JSON.stringify({ type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] });
    expect((await run(['schema', 'put', 'order', '-'], schema)).stdout).toBe('registered schema order (version 1)\n');
    expect(JSON.parse((await run(['schema', 'get', 'order', '-o', 'json'])).stdout)).toMatchObject({ name: 'order', type: 'json-schema', version: 1 });
    expect((await run(['schema', 'ls'])).stdout).toMatch(/order\s+json-schema\s+1/);
    await run(['create', '/cli/orders', '-t', 'application/json']);
    const patched = JSON.parse((await run(['config', 'patch', '/cli/orders', '--schema', 'order', '--validate', 'true', '--ttl', '3600', '-o', 'json'])).stdout);
    expect(patched).toMatchObject({ name: '/cli/orders', schema: 'order', schemaValidate: true, ttlSeconds: 3600 });
    const invalid = await run(['append', '/cli/orders', '{"amount":"x"}']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/schema_validation_failed: records\[0\]\/amount: must be number/);
    expect((await run(['config', 'get', '/cli/orders'])).stdout).toMatch(/schemaValidate:\s+true/);
    expect((await run(['schema', 'rm', 'order'])).code).toBe(5); // still bound
    await run(['config', 'patch', '/cli/orders', '{"schema":null,"schemaValidate":false}']);
    expect((await run(['schema', 'rm', 'order'])).code).toBe(0);
    expect((await run(['schema', 'get', 'order'])).code).toBe(4);
  });

  test('cluster status, nodes, node slots, transfer and stream inspect read the admin API', async () => {
    await run(['create', '/cli/placed']);
    const status = JSON.parse((await run(['cluster', 'status', '-o', 'json'])).stdout);
    expect(status).toMatchObject({ nodeId: 1, registered: true, pendingTransfers: [] });
    const nodes = JSON.parse((await run(['cluster', 'nodes', '-o', 'json'])).stdout);
    expect(nodes.nodes[0]).toMatchObject({ nodeId: 1, local: true });
    expect((await run(['cluster', 'nodes'])).stdout).toMatch(/^NODEID\s+NODEEPOCH\s+ADVERTISEDADDRESS/);
    expect(JSON.parse((await run(['cluster', 'node', 'slots', '1', '7', '-o', 'json'])).stdout)).toMatchObject({ nodeId: 1, slots: 7 });
    expect((await run(['cluster', 'node', 'slots', '9', '7'])).code).toBe(4);
    expect(JSON.parse((await run(['cluster', 'transfer', '/cli/placed', '1', '-o', 'json'])).stdout)).toMatchObject({ stream: '/cli/placed', toNode: 1 });
    expect((await run(['cluster', 'transfer', '/cli/placed', '2'])).code).toBe(1); // 400: not a valid target
    expect(JSON.parse((await run(['cluster', 'stream', 'inspect', '/cli/placed', '-o', 'json'])).stdout)).toMatchObject({ name: '/cli/placed', ownerNodeId: 1, state: 'placed' });
  });

  test('bench append and bench read print a rate and latency percentiles', async () => {
    const a = JSON.parse((await run(['bench', 'append', '--duration', '1', '-c', '4', '--record-size', '64', '-o', 'json'])).stdout);
    expect(a).toMatchObject({ workload: 'append', connections: 4, errors: 0 });
    expect(a.requests).toBeGreaterThan(10);
    expect(a.recordsPerSec).toBeGreaterThan(0);
    expect(a.latencyMs.p99).toBeGreaterThanOrEqual(a.latencyMs.p50);
    const b = JSON.parse((await run(['bench', 'append', '--duration', '1', '-c', '2', '--batch', '50', '-o', 'json'])).stdout);
    expect(b.errors).toBe(0);
    expect(b.records).toBe(b.requests * 50);
    expect(b.recordsPerSec).toBeGreaterThan(b.requestsPerSec * 49);
    const r = await run(['bench', 'read', '--duration', '1', '-c', '2', '--count', '10']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rate:\s+\d+ req\/s, \d+ records\/s/);
    expect(r.stdout).toMatch(/latency:\s+p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms/);
    // The temporary bench streams are removed afterwards.
    expect(JSON.parse((await run(['ls', '/bench/', '-o', 'json'])).stdout).streams).toEqual([]);
  });
});
