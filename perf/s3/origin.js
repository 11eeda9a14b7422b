// s3rver as the benchmark origin (no verifying shim: the benchmark measures speed, the tests
// measure correctness). Prints {"port": N} when ready. Env: ORIGIN_DIR, ORIGIN_BUCKETS.
// Needs `node --openssl-legacy-provider` on Node 20 for ListObjectsV2 paging.
'use strict';

const fs = require('node:fs');
const S3rver = require('s3rver');

// s3rver answers ListBuckets with a 500 while its directory does not exist yet.
fs.mkdirSync(process.env.ORIGIN_DIR, { recursive: true });

const buckets = (process.env.ORIGIN_BUCKETS || '').split(',').filter(Boolean);
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory: process.env.ORIGIN_DIR,
  allowMismatchedSignatures: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
server.run().then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\n'));
process.on('SIGTERM', () => server.close().finally(() => process.exit(0)));
