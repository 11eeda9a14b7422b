/**
 * One stream, three protocols: records appended over HTTP (keys, headers) and Durable Streams
 * are consumed by kcat and @platformatic/kafka; records produced compressed over Kafka are read
 * over HTTP (JSON with keys, headers and timestamps; raw) and Durable Streams.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { kcatConsume } from './kcat';
import { platformatic } from './platformatic';
import { python } from './python-process';

describe('records across the HTTP, Durable Streams and Kafka listeners', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('records appended over HTTP and Durable Streams are consumed by kcat and @platformatic/kafka with their keys and headers', async () => {
    expect((await fetch(`${node.url}/xp-http`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
    const batch = { records: [{ body: 'first', key: 'k1', headers: { source: 'http' } }, { body: 'second', key: 'k2' }] };
    const a = await fetch(`${node.url}/xp-http`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify(batch) });
    expect(a.status).toBeLessThan(300);
    const single = await fetch(`${node.url}/xp-http`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'third' });
    expect(single.status).toBeLessThan(300);
    const ds = await fetch(`${node.dsUrl!}/v1/stream/xp-http`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'fourth' });
    expect(ds.status).toBeLessThan(300);
    const http = (await (await fetch(`${node.url}/xp-http`)).json()) as Array<{ timestamp: number }>;
    const times = http.map((r) => String(r.timestamp));
    await new Promise((r) => setTimeout(r, 300)); // the topic index sees HTTP-created streams on its next rebuild

    const lines = await kcatConsume(node.kafka, 'xp-http');
    expect(lines.map((l) => l.split('|'))).toEqual([
      ['0', 'k1', 'first', 'source=http', times[0]],
      ['1', 'k2', 'second', '', times[1]],
      ['2', '', 'third', '', times[2]],
      ['3', '', 'fourth', '', times[3]],
    ]);
    const pf = await platformatic({ op: 'consume', broker: node.kafka, topic: 'xp-http' });
    expect(pf.records!.map((r) => [r.offset, r.key, r.value, r.headers, r.timestamp])).toEqual([
      ['0', 'k1', 'first', { source: 'http' }, times[0]],
      ['1', 'k2', 'second', {}, times[1]],
      ['2', null, 'third', {}, times[2]],
      ['3', null, 'fourth', {}, times[3]],
    ]);
  });

  test('lz4 records produced by @platformatic/kafka are read over HTTP with keys, headers and timestamps, and over Durable Streams', async () => {
    const values = Array.from({ length: 30 }, (_, i) => `lz-${i}-` + 'qrstuv'.repeat(15));
    const p = await platformatic({ op: 'produce', broker: node.kafka, topic: 'xp-lz4', autocreate: true, compression: 'lz4', messages: values.map((v, i) => ({ key: `k${i}`, value: v, headers: { n: String(i) } })) });
    expect(p.ok).toBe(true);
    const kafkaView = await platformatic({ op: 'consume', broker: node.kafka, topic: 'xp-lz4' });
    expect(kafkaView.records!.every((r) => r.codec === 3)).toBe(true);
    const http = (await (await fetch(`${node.url}/xp-lz4?count=100`)).json()) as Array<{ seq: number; key: string; body: string; headers: Record<string, string>; timestamp: number }>;
    expect(http.map((r) => [r.seq, r.key, r.body, r.headers, String(r.timestamp)])).toEqual(kafkaView.records!.map((r, i) => [i, r.key, r.value, r.headers, r.timestamp]));
    expect(http.map((r) => r.body)).toEqual(values);
    expect(await (await fetch(`${node.url}/xp-lz4?format=raw&seq=7&count=5`)).text()).toBe(values.slice(7, 12).join(''));
    const ds = await fetch(`${node.dsUrl!}/v1/stream/xp-lz4?offset=-1`);
    expect(await ds.text()).toBe(values.join(''));
  });

  test('repeated header keys, null header values and tombstones from Kafka read losslessly over HTTP, and the page appends elsewhere as it is', async () => {
    const records = [
      { key: 'k1', value: 'v1', headers: [['d', '1'], ['d', '2']] },
      { key: 'k2', value: 'v2', headers: [['n', null]] },
      { key: 'k3', value: null, headers: [['only', 'one']] },
    ];
    expect((await python<{ offsets: number[] }>('confluent_driver.py', { op: 'produce_records', broker: node.kafka, topic: 'xp-hdr', records })).offsets).toEqual([0, 1, 2]);
    const page = (await (await fetch(`${node.url}/xp-hdr`)).json()) as Array<Record<string, unknown>>;
    const strip = (p: Array<Record<string, unknown>>): unknown[] => p.map(({ seq: _s, timestamp: _t, ...rest }) => rest);
    expect(strip(page)).toEqual([
      { key: 'k1', header_list: [['d', '1'], ['d', '2']], body: 'v1' },
      { key: 'k2', header_list: [['n', null]], body: 'v2' },
      { key: 'k3', headers: { only: 'one' }, body: null },
    ]);
    expect((await fetch(`${node.url}/xp-hdr-copy`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
    const copy = await fetch(`${node.url}/xp-hdr-copy`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: page }) });
    expect(copy.status).toBeLessThan(300);
    const again = (await (await fetch(`${node.url}/xp-hdr-copy`)).json()) as Array<Record<string, unknown>>;
    expect(strip(again)).toEqual(strip(page));
    // And Kafka consumers see the copy's headers and tombstone as produced.
    await new Promise((r) => setTimeout(r, 300));
    const lines = await kcatConsume(node.kafka, 'xp-hdr-copy', ['-f', '%k|%S|%h\\n']);
    expect(lines).toEqual(['k1|2|d=1,d=2', 'k2|2|n=NULL', 'k3|-1|only=one']);
  });
});
