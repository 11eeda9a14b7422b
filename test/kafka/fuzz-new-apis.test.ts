/**
 * No request takes the node down: for every version of the admin, transaction and share-group APIs, frames
 * whose bodies are random bytes (seeded, so a failure repeats) or cut short are either answered
 * or close their connection, and the node goes on serving other connections.
 */
import * as net from 'node:net';
import { encodeRequestHeader } from '../../src/kafka-wire/messages/header';
import { KAFKA_APIS, requestHeaderVersion } from '../../src/kafka-wire/messages/index';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from './kafka-test-client';

/** The APIs added beside the produce/fetch/group core (docs/kafka.md, "Served APIs"). */
const KEYS = new Set([21, 24, 25, 26, 28, 32, 33, 37, 42, 44, 47, 60, 61, 65, 66, 76, 77, 78, 79]);

/** xorshift32: a deterministic byte source. */
function bytes(seed: number, n: number): Buffer {
  let x = seed || 1;
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

function frame(apiKey: number, version: number, headerVersion: number, body: Buffer): Buffer {
  const w = new Writer();
  w.reserveInt32();
  encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId: 7, clientId: 'fuzz' }, headerVersion);
  const head = Buffer.from(w.toBuffer());
  const out = Buffer.concat([head, body]);
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

/** Send one frame; resolves when the node answered or closed the connection (or 1 s passed). */
function send(broker: string, f: Buffer): Promise<'answered' | 'closed' | 'silent'> {
  const [host, port] = broker.split(':') as [string, string];
  return new Promise((resolve) => {
    const s = net.connect({ host, port: Number(port) }, () => s.write(f));
    const timer = setTimeout(() => (s.destroy(), resolve('silent')), 1000);
    s.once('data', () => (clearTimeout(timer), s.destroy(), resolve('answered')));
    s.once('close', () => (clearTimeout(timer), resolve('closed')));
    s.once('error', () => undefined);
  });
}

describe('random and truncated bodies of the admin, transaction and share-group APIs', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('are answered or close their connection, and the node keeps serving', async () => {
    let seed = 1;
    const outcomes = new Map<string, number>();
    for (const api of KAFKA_APIS.filter((a) => KEYS.has(a.apiKey))) {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        const hv = requestHeaderVersion(api, v);
        for (const n of [0, 3, 17, 64]) {
          const o = await send(node.kafka, frame(api.apiKey, v, hv, bytes(seed++, n)));
          outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
        }
      }
    }
    expect((outcomes.get('answered') ?? 0) + (outcomes.get('closed') ?? 0)).toBe(4 * 47); // 47 versions of the 19 APIs, four bodies each
    expect(outcomes.get('silent') ?? 0).toBe(0);
    expect(node.proc.exitCode).toBeNull();
    const k = await RawKafka.connect(node.kafka);
    const r = await k.request(18, 0, false, () => undefined);
    expect(r.int16()).toBe(0);
    k.close();
  }, 120_000);
});
