/**
 * Damaged bytes on disk seen from outside: a real node serves an error, never wrong bytes, on
 * every read path (Svc json/raw/binary/SSE, Durable Streams, Kafka Fetch with kcat); a damaged
 * frame followed by acknowledged frames stops the start with the file and the remedy;
 * `svc check` finds it and `svc repair` quarantines it so the node starts and serves the rest.
 */
import { spawnSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAIN, ROOT, startNode, tempDir } from '../helpers/node-process';
import { kcat } from '../kafka/kcat-process';
import { segFiles } from '../helpers/segment-files';

jest.setTimeout(60_000);

const ARGS = ['--shards', '1', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0'];


function flip(file: string, needle: string): void {
  const b = fs.readFileSync(file);
  const at = b.indexOf(needle);
  if (at < 0) throw new Error(`${needle} not found`);
  b[at] = b[at]! ^ 0x01;
  fs.writeFileSync(file, b);
}

async function fill(url: string, stream: string, n: number): Promise<void> {
  expect((await fetch(url + stream, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  for (let i = 0; i < n; i++) {
    const res = await fetch(url + stream, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `record-${String(i).padStart(3, '0')}` });
    expect(res.status).toBe(200);
  }
}

function svc(args: string[]): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** Start a node expected to refuse: resolves with its exit code and output. */
function failedStart(dataDir: string): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [MAIN, 'serve', '--listen', '127.0.0.1:0', '--no-admin', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir, ...ARGS], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

describe('a flipped byte in stored record data', () => {
  it('is answered 500 data_corrupt naming the stream and seqs on every read path, never with wrong bytes', async () => {
    const dataDir = tempDir();
    let node = await startNode({ dataDir, args: ARGS });
    await fill(node.url, '/bad', 10);
    await fill(node.url, '/good', 3);
    expect(await node.stop()).toBe(0);
    // 'record-004' becomes 'secord-004': wrong bytes with the right length.
    flip(segFiles(dataDir)[0]!, 'record-004');
    // A clean stop checkpointed the whole log: the start replays nothing and does not see the damage.
    node = await startNode({ dataDir, args: ARGS });

    for (const format of ['json', 'raw', 'binary']) {
      const res = await fetch(`${node.url}/bad?seq=0&format=${format}`);
      expect(res.status).toBe(500);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe('data_corrupt');
      expect(body.message).toMatch(/stream \/bad: records \d+\.\.\d+ cannot be served/);
    }
    // Another stream of the same segment is unharmed.
    const good = await fetch(`${node.url}/good?seq=0&format=raw`);
    expect(good.status).toBe(200);
    expect(await good.text()).toBe('record-000record-001record-002');

    // SSE catch-up: no record event carries the damaged bytes.
    const sse = await fetch(`${node.url}/bad?seq=0&live=sse`, { signal: AbortSignal.timeout(3000) }).catch(() => null);
    if (sse !== null && sse.status === 200) {
      const text = await sse.text().catch(() => '');
      expect(text).not.toContain('secord-004');
    } else if (sse !== null) {
      expect(sse.status).toBe(500);
    }

    // Durable Streams listener.
    const ds = await fetch(`${node.dsUrl}/v1/stream/bad?offset=-1`);
    expect(ds.status).toBe(500);
    expect(await ds.text()).toMatch(/data_corrupt|cannot be served/);

    // Kafka Fetch (librdkafka): an error, never the record.
    const run = kcat(['-b', node.kafka, '-C', '-t', 'bad', '-p', '0', '-o', 'beginning', '-e', '-f', '%s\\n']);
    for (let i = 0; i < 100 && !/Invalid message/i.test(run.stderr()) && run.proc.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
    await run.stop();
    // Kafka's CORRUPT_MESSAGE (2), which librdkafka names "Invalid message".
    expect(run.stderr()).toMatch(/Broker: Invalid message/);
    expect(run.stdout()).not.toContain('secord-004');

    // The offline tools refuse a directory a running node holds.
    const repair = svc(['repair', '--data-dir', dataDir]);
    expect(repair.status).toBe(1);
    expect(repair.err).toMatch(/is locked by another process \(pid \d+, svc serve since .*\): stop the node using it first/);
    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(1);
    expect(check.err).toMatch(/is locked by another process \(pid \d+, svc serve since .*\): stop the node using it first/);
    expect(fs.readFileSync(segFiles(dataDir)[0]!).includes('secord-004')).toBe(true);
    expect(svc(['check']).status).toBe(2);
    await node.stop();
  });
});

describe('a damaged frame followed by acknowledged frames', () => {
  it('stops the start naming shard, file and remedy; svc check finds it; svc repair quarantines it and the node serves the rest', async () => {
    const dataDir = tempDir();
    const node = await startNode({ dataDir, args: ARGS });
    await fill(node.url, '/acked', 30);
    await node.kill();
    const seg = segFiles(dataDir)[0]!;
    flip(seg, 'record-007');
    // The index is lost too, so the start replays the whole log through the damaged frame
    // (as a crash before the checkpoint catches up does).
    fs.rmSync(path.join(dataDir, 'shards', '0', 'index'), { recursive: true });

    const refused = await failedStart(dataDir);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toContain('shard 0');
    expect(refused.out).toContain(seg);
    expect(refused.out).toMatch(/svc repair/);
    // Nothing acknowledged was cut.
    expect(fs.readFileSync(seg).includes('record-029')).toBe(true);

    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(1);
    expect(check.err).toContain(seg);
    expect(check.out).toMatch(/DAMAGED/);

    const repair = svc(['repair', '--data-dir', dataDir]);
    expect(repair.status).toBe(0);
    expect(repair.out).toMatch(/quarantined in .*quarantine/);
    const quarantined = fs.readdirSync(path.join(dataDir, 'shards', '0', 'quarantine'));
    expect(quarantined.length).toBe(1);
    expect(fs.readFileSync(path.join(dataDir, 'shards', '0', 'quarantine', quarantined[0]!)).toString('latin1')).toContain('ecord-007');

    expect(svc(['check', '--data-dir', dataDir]).status).toBe(0);
    const again = await startNode({ dataDir, args: ARGS });
    const res = await fetch(`${again.url}/acked?seq=0&format=json&count=100`);
    expect(res.status).toBe(200);
    const bodies = ((await res.json()) as Array<{ body: string }>).map((r) => r.body);
    // Every record but the quarantined one, byte for byte.
    expect(bodies).toEqual(Array.from({ length: 30 }, (_, i) => `record-${String(i).padStart(3, '0')}`).filter((b) => b !== 'record-007'));
    await again.stop();
  });
});
