'use strict';
// Micro-benchmark of the cost under W6's fan-out: one streamed-response write() per reader, through
// the gateway's HTTP engine (dist/), to N readers that hold an SSE-like response open from another
// process and read everything. A pass writes one chunk to every reader; the figure is µs per write,
// timed until the writes have reached the kernel (node:http flushes corked writes a tick later).
// Usage: node perf/micro/fanout-write.js [uws|node] [readers=10000] [bytes=200,1500,15000]
const net = require('node:net');
const { fork } = require('node:child_process');

if (process.argv[2] === '--reader') {
  // The reader process: N connections on 127.0.0.1, each sends a GET and reads whatever comes.
  const [port, n] = [Number(process.argv[3]), Number(process.argv[4])];
  (async () => {
    for (let i = 0; i < n; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('connect', () => s.write('GET /s HTTP/1.1\r\nHost: bench\r\n\r\n'));
      s.on('data', () => {});
      s.on('error', () => {});
      if (i % 500 === 499) await new Promise((r) => setTimeout(r, 50));
    }
    process.send('attached');
  })();
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

async function main() {
  const engineName = process.argv[2] ?? 'uws';
  const readers = Number(process.argv[3] ?? 10000);
  const sizes = (process.argv[4] ?? '200,1500,15000').split(',').map(Number);
  const { createUwsEngine } = require('../../dist/program/http/uws-engine');
  const { createNodeEngine } = require('../../dist/program/http/node-engine');
  const engine = engineName === 'node' ? createNodeEngine() : createUwsEngine();
  const responses = [];
  const server = await engine.listen(
    { host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge: () => ({ status: 413, headers: [], body: '' }) },
    (req, res) => {
      res.onAborted(() => {});
      res.writeHead(200, [['content-type', 'text/event-stream']]);
      res.write(': hello\n\n');
      responses.push(res);
    },
  );
  const child = fork(__filename, ['--reader', String(server.port), String(readers)]);
  await new Promise((r) => child.once('message', r));
  while (responses.length < readers) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1000));
  for (const size of sizes) {
    const chunk = Buffer.alloc(size, 0x61);
    const runs = [];
    for (let k = 0; k < 5; k++) {
      const t = process.hrtime.bigint();
      for (const res of responses) res.write(chunk);
      await new Promise((r) => setImmediate(r));
      runs.push(Number(process.hrtime.bigint() - t) / 1e3 / readers);
      await new Promise((r) => setTimeout(r, 300));
    }
    runs.sort((a, b) => a - b);
    console.log(`${engineName}: ${readers} readers, ${size} B per write: median ${runs[2].toFixed(1)} µs per write (best ${runs[0].toFixed(1)}), pass ${((runs[2] * readers) / 1000).toFixed(0)} ms`);
  }
  child.kill();
  for (const res of responses) res.destroy();
  await server.close();
  process.exit(0);
}
