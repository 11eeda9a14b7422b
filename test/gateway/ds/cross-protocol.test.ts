/**
 * One storage behind both listeners: a stream created over Durable Streams is a stream of the
 * node, read over the Svc protocol with the same records in the same order, and the reverse.
 * DS offset `0000000000000000_%016d` and Svc seq name the same position (docs/durable-streams.md).
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';

interface SvcRecord {
  seq: number;
  body?: string;
  body_b64?: string;
}

const offset = (seq: number): string => `0000000000000000_${String(seq).padStart(16, '0')}`;

for (const engine of ['uws', 'node'] as const) {
  describe(`streams shared by the Svc and Durable Streams listeners (${engine} engine)`, () => {
    let node: NodeProcess;
    let svc: string;
    let ds: string;
    let n = 0;
    const unique = (label: string): string => `x${++n}-${label}-${Math.random().toString(36).slice(2, 8)}`;

    beforeAll(async () => {
      node = await startNode({ engine, args: ['--ds-listen', '127.0.0.1:0', '--no-admin'] });
      svc = node.url;
      ds = `${node.dsUrl!}/v1/stream`;
    });
    afterAll(async () => {
      await node.stop();
    });

    const svcRecords = async (name: string, seq = 0): Promise<SvcRecord[]> => {
      const res = await fetch(`${svc}/${name}?format=json&seq=${seq}`);
      expect(res.status).toBe(200);
      return (await res.json()) as SvcRecord[];
    };

    test('a text stream created and appended over DS reads the same over Svc, one record per message', async () => {
      const name = unique('ds-text');
      expect((await fetch(`${ds}/${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'alpha' })).status).toBe(201);
      for (const m of ['beta', 'gamma\nwith a newline', 'δέλτα']) {
        const r = await fetch(`${ds}/${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: m });
        expect(r.status).toBe(204);
      }
      const records = await svcRecords(name);
      expect(records.map((r) => [r.seq, r.body])).toEqual([
        [0, 'alpha'],
        [1, 'beta'],
        [2, 'gamma\nwith a newline'],
        [3, 'δέλτα'],
      ]);
      const head = await fetch(`${svc}/${name}`, { method: 'HEAD' });
      expect(head.headers.get('content-type')).toBe('text/plain');
      expect(head.headers.get('svc-next-seq')).toBe('4');
      const raw = await fetch(`${svc}/${name}?format=raw`);
      expect(await raw.text()).toBe('alphabetagamma\nwith a newlineδέλτα');
      const dsRead = await fetch(`${ds}/${name}?offset=-1`);
      expect(await dsRead.text()).toBe('alphabetagamma\nwith a newlineδέλτα');
      expect(dsRead.headers.get('stream-next-offset')).toBe(offset(4));
    });

    test('a DS JSON append of an array is one record per element over Svc', async () => {
      const name = unique('ds-json');
      await fetch(`${ds}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
      const r = await fetch(`${ds}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ a: 1 }, [2, 3], 'four']) });
      expect(r.status).toBe(204);
      expect(r.headers.get('stream-next-offset')).toBe(offset(3));
      const records = await svcRecords(name);
      expect(records.map((x) => JSON.parse(x.body!) as unknown)).toEqual([{ a: 1 }, [2, 3], 'four']);
    });

    test('a stream created and appended over Svc reads the same over DS, and positions agree', async () => {
      const name = unique('svc-json');
      expect((await fetch(`${svc}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"n":0}' })).status).toBe(201);
      const batch = { records: [1, 2, 3, 4].map((i) => ({ body: JSON.stringify({ n: i }) })) };
      expect((await fetch(`${svc}/${name}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify(batch) })).status).toBe(200);
      const all = await fetch(`${ds}/${name}?offset=-1`);
      expect(all.status).toBe(200);
      expect(await all.json()).toEqual([0, 1, 2, 3, 4].map((i) => ({ n: i })));
      expect(all.headers.get('stream-next-offset')).toBe(offset(5));
      // DS offset k and Svc seq k are one position.
      const fromTwo = await fetch(`${ds}/${name}?offset=${offset(2)}`);
      expect(await fromTwo.json()).toEqual([2, 3, 4].map((i) => ({ n: i })));
      expect((await svcRecords(name, 2)).map((r) => r.seq)).toEqual([2, 3, 4]);
    });

    test('binary messages appended alternately over both listeners keep one order and their exact bytes', async () => {
      const name = unique('mixed');
      await fetch(`${ds}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
      const sent: Buffer[] = [];
      for (let i = 0; i < 20; i++) {
        const body = Buffer.from(Array.from({ length: 1 + i * 7 }, (_, j) => (i * 31 + j) & 0xff));
        sent.push(body);
        const url = i % 2 === 0 ? `${ds}/${name}` : `${svc}/${name}`;
        const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
        expect([200, 204]).toContain(r.status);
      }
      const viaDs = Buffer.from(await (await fetch(`${ds}/${name}?offset=-1`)).arrayBuffer());
      const viaSvc = Buffer.from(await (await fetch(`${svc}/${name}?format=raw`)).arrayBuffer());
      expect(viaDs.equals(Buffer.concat(sent))).toBe(true);
      expect(viaSvc.equals(Buffer.concat(sent))).toBe(true);
      const records = await svcRecords(name);
      // The JSON read format carries a body as text when it is valid UTF-8, else as base64.
      expect(records.map((r) => (r.body_b64 !== undefined ? Buffer.from(r.body_b64, 'base64') : Buffer.from(r.body ?? '', 'utf8')))).toEqual(sent);
    });

    test('closing over DS seals the stream for Svc writers, and a Svc seal closes it for DS readers', async () => {
      const a = unique('close-ds');
      await fetch(`${ds}/${a}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect((await fetch(`${ds}/${a}`, { method: 'POST', headers: { 'stream-closed': 'true' } })).status).toBe(204);
      const head = await fetch(`${svc}/${a}`, { method: 'HEAD' });
      expect(head.headers.get('svc-closed')).toBe('true');
      const late = await fetch(`${svc}/${a}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'y' });
      expect(late.status).toBe(409);

      const b = unique('close-svc');
      await fetch(`${svc}/${b}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'z' });
      expect((await fetch(`${svc}/${b}`, { method: 'POST', headers: { 'svc-closed': 'true' } })).status).toBe(200);
      const read = await fetch(`${ds}/${b}?offset=-1`);
      expect(await read.text()).toBe('z');
      expect(read.headers.get('stream-closed')).toBe('true');
    });

    test('a stream deleted over one listener is gone on the other', async () => {
      const name = unique('delete');
      await fetch(`${svc}/${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
      expect((await fetch(`${ds}/${name}`, { method: 'DELETE' })).status).toBe(204);
      expect((await fetch(`${svc}/${name}`, { method: 'HEAD' })).status).toBe(404);
      expect((await fetch(`${ds}/${name}`, { method: 'HEAD' })).status).toBe(404);
    });
  });
}
