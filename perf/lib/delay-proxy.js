'use strict';
// An object store with a real one's latency, for benchmarks and tests: an HTTP proxy in front of
// a local S3 server (s3rver) that holds each request for a delay drawn per request before it
// forwards it, then streams both bodies through. S3 in one region answers a small PUT in some
// 20–80 ms and a GET's first byte in 10–30 ms; a local server answers in under one, which hides
// whether the node keeps several requests in flight (docs/objects.md, "Latency").
//
//   const p = await startDelayProxy('http://127.0.0.1:9000', { putMs: [40, 60], getMs: [10, 30] });
//   // --objects s3://bucket/prefix?endpoint=<p.url>  …  await p.stop()
//
// PUT and POST take `putMs`, every other method (GET, HEAD, DELETE, listings) `getMs`; each a
// fixed delay (a number) or a [min, max] range drawn uniformly. Signatures pass through
// unchanged: the proxy forwards the Host header the client signed.

const http = require('node:http');

/** A delay in ms from a number or a [min, max] range. */
function draw(spec) {
  if (typeof spec === 'number') return spec;
  const [min, max] = spec;
  return min + Math.random() * (max - min);
}

/**
 * Starts the proxy on a free loopback port in front of `target` (an http:// base URL).
 * Resolves {url, stop(), stats: {requests, delayedMs}}.
 */
function startDelayProxy(target, { putMs = 0, getMs = 0 } = {}) {
  const to = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const stats = { requests: 0, delayedMs: 0 };
  const server = http.createServer((req, res) => {
    const ms = draw(req.method === 'PUT' || req.method === 'POST' ? putMs : getMs);
    stats.requests++;
    stats.delayedMs += ms;
    req.pause();
    setTimeout(() => {
      const up = http.request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers, agent },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`delay proxy: ${err.message}`);
      });
      req.pipe(up);
      req.resume();
    }, ms);
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        stats,
        stop: () =>
          new Promise((done) => {
            agent.destroy();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

module.exports = { startDelayProxy };
