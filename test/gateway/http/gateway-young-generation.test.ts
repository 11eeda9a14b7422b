/**
 * A gateway thread's V8 young generation (GatewayThreadSpec.youngGenerationMb, io-threads.ts):
 * the uWS engine's threads start with a young generation of the size asked for, instead of a
 * worker's small default that grows and shrinks (perf/README.md, "Gateway threads": with it, a
 * thread page-faulted about 0.7 times per append it served). The floor is V8's process-wide
 * flag, so a worker made after the threads started gets the default again. Each thread answers
 * with its own new space's size, read inside it. The engine is loaded from dist/.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import type * as Http from '../../../src/gateway/http';
import { uwsLoads } from '../../helpers/engines';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadHttpEngine } = require('../../../dist/gateway/http') as typeof Http;

const MiB = 1024 * 1024;
const THREADS = 2;

/** A gateway module that serves every request itself: the size of its thread's new space. */
const MODULE = `
const v8 = require('node:v8');
exports.startGateway = async () => ({
  serves: () => true,
  handler: (req, res) => {
    const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
    res.send(200, [['content-type', 'application/json']], JSON.stringify({ newSpace: s.space_size }));
  },
});
`;

const tooLarge: Http.ListenOptions['tooLarge'] = () => ({ status: 413, headers: [], body: '' });

const run = uwsLoads() ? describe : describe.skip;

run('gateway threads\' young generation (uWS engine)', () => {
  let dir: string;
  const ports: MessagePort[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-gw-young-'));
    fs.writeFileSync(path.join(dir, 'gateway.js'), MODULE);
  });

  afterAll(() => {
    for (const p of ports) p.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Listen with THREADS gateway threads, ask each connection's thread its new space, close. */
  async function newSpaces(youngGenerationMb: number | undefined): Promise<number[]> {
    const engine = await loadHttpEngine('uws', { warn: () => undefined });
    const gateway: Http.ListenOptions['gateway'] = {
      module: path.join(dir, 'gateway.js'),
      start: () => {
        const { port1, port2 } = new MessageChannel();
        ports.push(port1);
        return { data: null, port: port2 };
      },
      ...(youngGenerationMb === undefined ? {} : { youngGenerationMb }),
    };
    const server = await engine.listen({ host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge, threads: THREADS, gateway }, () => undefined);
    try {
      const sizes: number[] = [];
      // A fresh connection per request: the kernel spreads them over the threads.
      for (let i = 0; i < 16; i++) {
        const agent = new Agent({ connections: 1 });
        try {
          const r = await request(`http://127.0.0.1:${server.port}/x`, { dispatcher: agent });
          expect(r.statusCode).toBe(200);
          sizes.push(((await r.body.json()) as { newSpace: number }).newSpace);
        } finally {
          await agent.close();
        }
      }
      return sizes;
    } finally {
      await server.close();
    }
  }

  test('with youngGenerationMb each thread starts with a third of it per semi-space; without, with the worker default', async () => {
    const fixed = await newSpaces(48);
    for (const s of fixed) expect(s).toBeGreaterThanOrEqual(16 * MiB);
    const plain = await newSpaces(undefined);
    for (const s of plain) expect(s).toBeLessThan(16 * MiB);
  }, 60_000);

  test('a worker made after the threads started gets V8\'s default young generation again', async () => {
    await newSpaces(48);
    const size = await new Promise<number>((resolve, reject) => {
      const w = new Worker("const v8 = require('node:v8'); require('node:worker_threads').parentPort.postMessage(v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space').space_size);", { eval: true });
      w.once('message', (m: number) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
    expect(size).toBeLessThan(16 * MiB);
  }, 60_000);
});
