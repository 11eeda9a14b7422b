// Anchor for the svc-cache benchmark: a bare node:http server answering every request with
// the same bytes from memory and the headers a cache hit carries. The ceiling for any
// node:http server on this machine; svc-cache's ratio to it is the cost of its own work.
// Prints {"port": N} when ready. Env: BARE_SIZES (comma-separated sizes in bytes, served at /<size>).
'use strict';

const http = require('node:http');

const bodies = new Map((process.env.BARE_SIZES || '4096').split(',').map((s) => [`/${s}`, Buffer.alloc(Number(s), 'x')]));
const server = http.createServer((req, res) => {
  const body = bodies.get(req.url.split('?')[0]);
  if (body === undefined) {
    res.writeHead(404, { 'content-length': 0 }).end();
    return;
  }
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    etag: '"0123456789abcdef0123456789abcdef"',
    'last-modified': 'Mon, 23 Nov 2026 00:00:00 GMT',
    'accept-ranges': 'bytes',
    'content-length': body.length,
    'x-amz-request-id': '0123456789ABCDEF',
  });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
