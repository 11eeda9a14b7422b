/**
 * What the Durable Streams listener acknowledged survives a SIGKILL: messages, the last
 * Stream-Seq, idempotent producer state (a producer's close without a body included), forks and
 * their sources' soft deletion.
 */
import { startNode, tempDir } from '../../helpers/node-process';

const offset = (seq: number): string => `0000000000000000_${String(seq).padStart(16, '0')}`;
const seqOf = (i: number): string => String(i).padStart(4, '0');

test('acknowledged DS writes, writer sequences, producers and forks survive a SIGKILL', async () => {
  const dataDir = tempDir('svc-ds-crash-');
  const args = ['--protocol', 'ds', '--no-admin'];
  let node = await startNode({ dataDir, args });
  let base = `${node.url}/v1/stream`;
  const text = { 'content-type': 'text/plain' };

  // Messages with a writer sequence.
  expect((await fetch(`${base}/log`, { method: 'PUT', headers: text })).status).toBe(201);
  for (let i = 1; i <= 50; i++) {
    const r = await fetch(`${base}/log`, { method: 'POST', headers: { ...text, 'stream-seq': seqOf(i) }, body: `m${i};` });
    expect(r.status).toBe(204);
  }
  // An idempotent producer, then its close without a body.
  expect((await fetch(`${base}/produced`, { method: 'PUT', headers: text })).status).toBe(201);
  for (let s = 0; s < 5; s++) {
    const r = await fetch(`${base}/produced`, { method: 'POST', headers: { ...text, 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': String(s) }, body: `p${s};` });
    expect(r.status).toBe(200);
  }
  const close = { 'stream-closed': 'true', 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '5' };
  // A fork of the log at message 10, then the log deleted: kept for the fork.
  const fork = await fetch(`${base}/fork`, { method: 'PUT', headers: { ...text, 'stream-forked-from': '/v1/stream/log', 'stream-fork-offset': offset(10) } });
  expect(fork.status).toBe(201);
  expect((await fetch(`${base}/fork`, { method: 'POST', headers: text, body: 'own;' })).status).toBe(204);
  expect((await fetch(`${base}/log`, { method: 'DELETE' })).status).toBe(204);
  // Last, so that the kill comes before the next checkpoint: only the log's SEAL frame holds it.
  expect((await fetch(`${base}/produced`, { method: 'POST', headers: close })).status).toBe(204);

  await node.kill();
  node = await startNode({ dataDir, args });
  base = `${node.url}/v1/stream`;

  // The log is soft-deleted: gone for everyone but its fork, which reads it up to the fork point.
  expect((await fetch(`${base}/log`, { method: 'HEAD' })).status).toBe(410);
  const forkRead = await fetch(`${base}/fork?offset=-1`);
  expect(await forkRead.text()).toBe(Array.from({ length: 10 }, (_, i) => `m${i + 1};`).join('') + 'own;');
  expect(forkRead.headers.get('stream-next-offset')).toBe(offset(11));

  // The producer's state: its close is remembered (a retry is a duplicate), its stream is closed.
  const retry = await fetch(`${base}/produced`, { method: 'POST', headers: close });
  expect(retry.status).toBe(204);
  expect(retry.headers.get('stream-closed')).toBe('true');
  expect(retry.headers.get('producer-seq')).toBe('5');
  // Seq 6 follows the close (so the stream's closed state answers), not a gap after seq 4.
  const after = await fetch(`${base}/produced`, { method: 'POST', headers: { ...text, 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '6' }, body: 'late' });
  expect(after.status).toBe(409);
  expect(after.headers.get('stream-closed')).toBe('true');
  expect(after.headers.get('producer-expected-seq')).toBeNull();
  const produced = await fetch(`${base}/produced?offset=-1`);
  expect(await produced.text()).toBe('p0;p1;p2;p3;p4;');
  expect(produced.headers.get('stream-closed')).toBe('true');

  // Deleting the fork lets the log go for good.
  expect((await fetch(`${base}/fork`, { method: 'DELETE' })).status).toBe(204);
  expect((await fetch(`${base}/log`, { method: 'HEAD' })).status).toBe(404);
  await node.stop();
});

test('the last Stream-Seq accepted before a SIGKILL still orders writers after it', async () => {
  const dataDir = tempDir('svc-ds-crash-seq-');
  const args = ['--protocol', 'ds', '--no-admin'];
  let node = await startNode({ dataDir, args });
  let url = `${node.url}/v1/stream/seq`;
  await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
  for (const s of ['a', 'b', 'c']) expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', 'stream-seq': s }, body: s })).status).toBe(204);
  await node.kill();
  node = await startNode({ dataDir, args });
  url = `${node.url}/v1/stream/seq`;
  expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', 'stream-seq': 'c' }, body: 'again' })).status).toBe(409);
  expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', 'stream-seq': 'd' }, body: 'd' })).status).toBe(204);
  expect(await (await fetch(`${url}?offset=-1`)).text()).toBe('abcd');
  await node.stop();
});
