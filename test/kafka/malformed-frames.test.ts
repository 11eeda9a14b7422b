/**
 * Raw sockets against the Kafka listener: malformed frames, oversize requests and unknown API
 * keys close the connection with a log line and never disturb other connections; acks=0 gets no
 * response at all; bad batches get the protocol's error codes.
 */
import * as net from 'node:net';
import { encodeApiVersionsRequest } from '../../src/kafka-wire/messages/api-versions';
import { encodeRequestHeader } from '../../src/kafka-wire/messages/header';
import { encodeProduceRequest } from '../../src/kafka-wire/messages/produce';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { Compression, CRC_POS } from '../../src/util/record-batch';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from './kafka-test-client';
import { batchOf, compressed, produce, withRecords } from './raw-produce';

/** A request frame (size prefix included). */
function frame(apiKey: number, version: number, correlationId: number, flexible: boolean, body: (w: Writer) => void): Buffer {
  const w = new Writer();
  const size = w.reserveInt32();
  encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId: 'raw' }, flexible ? 2 : 1);
  body(w);
  w.int32At(size, w.length - 4);
  return Buffer.from(w.toBuffer());
}

/** Connect, send `bytes`, and collect what comes back until the server closes or `ms` pass. */
function exchange(broker: string, bytes: Buffer[], ms = 2000): Promise<{ data: Buffer; closedByServer: boolean }> {
  const [host, port] = broker.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect({ host, port: Number(port) }, () => {
      for (const b of bytes) s.write(b);
    });
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ data: Buffer.concat(chunks), closedByServer: false });
    }, ms);
    s.on('data', (d: Buffer) => chunks.push(d));
    // A server that closes with bytes of ours still unread in its socket sends a reset, not a FIN
    // (a frame it refused without reading): closed by the server all the same.
    s.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === 'ECONNRESET') resolve({ data: Buffer.concat(chunks), closedByServer: true });
      else reject(err);
    });
    s.once('end', () => {
      clearTimeout(timer);
      s.destroy();
      resolve({ data: Buffer.concat(chunks), closedByServer: true });
    });
  });
}

/** The node's log line arrives through its stdout pipe, possibly after the socket closed. */
async function logged(node: NodeProcess, text: string): Promise<string> {
  for (let i = 0; i < 50 && !node.output().includes(text); i++) await new Promise((r) => setTimeout(r, 50));
  return node.output();
}

const apiVersions = (correlationId: number): Buffer => frame(18, 2, correlationId, false, (w) => encodeApiVersionsRequest(w, {}, 2));

describe('the Kafka listener with malformed and unusual requests', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--max-request-bytes', '1048576'] });
    expect((await fetch(`${node.url}/raw-bad`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  });
  afterAll(async () => {
    await node.stop();
  });

  async function stillServes(): Promise<void> {
    const r = await exchange(node.kafka, [apiVersions(77)], 1000);
    expect(r.data.length).toBeGreaterThan(8);
    expect(r.data.readInt32BE(4)).toBe(77);
  }

  test('closes the connection on an unknown API key, with a log line', async () => {
    const r = await exchange(node.kafka, [frame(999, 0, 1, false, () => undefined)]);
    expect(r).toEqual({ data: Buffer.alloc(0), closedByServer: true });
    expect(await logged(node, 'API key 999 is not served')).toContain('API key 999 is not served');
    await stillServes();
  });

  test('a client repeating a refused request is logged once per 10 s, not once per connection', async () => {
    for (let i = 0; i < 20; i++) expect((await exchange(node.kafka, [frame(998, 0, 1, false, () => undefined)], 500)).closedByServer).toBe(true);
    await logged(node, 'API key 998 is not served');
    expect(node.output().split('\n').filter((l) => l.includes('API key 998 is not served'))).toHaveLength(1);
    await stillServes();
  });

  test('closes the connection on a frame larger than the request limit, without reading it', async () => {
    const head = Buffer.alloc(4);
    head.writeInt32BE(64 * 1024 * 1024, 0);
    const r = await exchange(node.kafka, [head, Buffer.alloc(1024)]);
    expect(r.closedByServer).toBe(true);
    expect(await logged(node, 'size out of range')).toContain('size out of range');
    await stillServes();
  });

  test('closes the connection on a negative frame size', async () => {
    const r = await exchange(node.kafka, [Buffer.from([0xff, 0xff, 0xff, 0xf0])]);
    expect(r.closedByServer).toBe(true);
    await stillServes();
  });

  test('closes the connection on a body that does not parse, and answers the requests before it', async () => {
    const garbage = Buffer.concat([frame(3, 12, 2, true, () => undefined).subarray(0, 4), Buffer.from([0, 3, 0, 12, 0, 0, 0, 2, 0xff, 0xff, 0x7f, 0x7f, 0x7f])]);
    garbage.writeInt32BE(garbage.length - 4, 0);
    const r = await exchange(node.kafka, [apiVersions(1), garbage]);
    expect(r.closedByServer).toBe(true);
    expect(r.data.readInt32BE(4)).toBe(1);
    expect(r.data.length).toBe(4 + r.data.readInt32BE(0));
    await stillServes();
  });

  test('closes the connection on a frame shorter than a request header', async () => {
    const r = await exchange(node.kafka, [Buffer.from([0, 0, 0, 3, 0, 18, 0])]);
    expect(r.closedByServer).toBe(true);
    await stillServes();
  });

  test('sends no response to acks=0: the next response on the connection is the next request\'s', async () => {
    const produce0 = frame(0, 9, 5, true, (w) =>
      encodeProduceRequest(w, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name: 'raw-bad', partitionData: [{ index: 0, records: batchOf(['quiet']) }] }] }, 9),
    );
    const r = await exchange(node.kafka, [produce0, apiVersions(6)], 1000);
    expect(r.closedByServer).toBe(false);
    expect(r.data.readInt32BE(4)).toBe(6);
    expect(r.data.length).toBe(4 + r.data.readInt32BE(0));
    const body = (await (await fetch(`${node.url}/raw-bad`)).json()) as Array<{ body: string }>;
    expect(body.map((x) => x.body)).toContain('quiet');
  });

  test('answers CORRUPT_MESSAGE for a batch with a bad CRC and for a compressed batch that does not decompress, and keeps the connection', async () => {
    const k = await RawKafka.connect(node.kafka);
    try {
      const bad = batchOf(['x']);
      bad.writeUInt32BE((bad.readUInt32BE(CRC_POS) ^ 1) >>> 0, CRC_POS);
      expect((await produce(k, 'raw-bad', bad)).errorCode).toBe(2);
      const junk = withRecords(batchOf(['y']), Buffer.from('not gzip at all'), Compression.gzip);
      expect((await produce(k, 'raw-bad', junk)).errorCode).toBe(2);
      // A well-formed compressed batch on the same connection is accepted.
      const ok = await produce(k, 'raw-bad', compressed(batchOf(['z1', 'z2']), Compression.gzip));
      expect(ok.errorCode).toBe(0);
    } finally {
      k.close();
    }
  });
});
