/** Probes, --no-admin, and graceful shutdown on SIGTERM. */
import { startNode, tempDir } from '../helpers/node-process';

describe.each(['uws', 'node'] as const)('node lifecycle on the %s engine', (engine) => {
  it('answers /health and /ready on the admin listener', async () => {
    const node = await startNode({ engine });
    const health = await fetch(node.adminUrl + '/health');
    expect(health.status).toBe(200);
    const ready = await fetch(node.adminUrl + '/ready');
    expect(ready.status).toBe(200);
    // A new node has written its cluster id and its node record: two metadata commands.
    expect(await ready.json()).toEqual({ ready: true, serving: true, registered: true, appliedIndex: 2, nodeId: 1 });
    expect((await fetch(node.adminUrl + '/admin/nope')).status).toBe(404);
    await node.stop();
  });

  it('runs without any admin listener with --no-admin', async () => {
    const node = await startNode({ engine, args: ['--no-admin'] });
    expect(node.adminUrl).toBeNull();
    expect((await fetch(node.url + '/')).status).toBe(200);
    await node.stop();
  });

  it('finishes in-flight appends on SIGTERM, exits 0, and keeps every acknowledged record', async () => {
    const dataDir = tempDir();
    const node = await startNode({ engine, dataDir });
    expect((await fetch(node.url + '/g', { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const sends = Array.from({ length: 200 }, (_, i) =>
      fetch(node.url + '/g', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `m${i}` }).then(
        async (r) => ({ status: r.status, start: Number(r.headers.get('svc-start-seq')), body: `m${i}`, text: await r.text() }),
        () => null,
      ),
    );
    // Stop once the first append is acknowledged, while most are still in flight.
    await Promise.race(sends.map((p) => p.then((r) => (r?.status === 200 ? r : new Promise(() => undefined)))));
    const exit = node.stop();
    const results = await Promise.all(sends);
    expect(await exit).toBe(0);
    expect(node.output()).toMatch(/node stopped/);
    const acked = results.filter((r): r is NonNullable<typeof r> => r !== null && r.status === 200);
    // Anything refused during shutdown is refused cleanly, never a 500.
    for (const r of results) if (r !== null && r.status !== 200) expect(r.status).toBe(503);
    expect(acked.length).toBeGreaterThan(0);

    const again = await startNode({ engine, dataDir });
    const page = (await (await fetch(again.url + '/g?count=1000')).json()) as Array<{ seq: number; body: string }>;
    const bySeq = new Map(page.map((r) => [r.seq, r.body]));
    for (const a of acked) expect(bySeq.get(a.start)).toBe(a.body);
    await again.stop();
  });
});
