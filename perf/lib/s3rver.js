'use strict';
// A local S3 server for benchmarks: s3rver (npm) in a child process (perf/s3/origin.js, which
// accepts any signature: the benchmarks measure speed, the tests check signing).

const path = require('node:path');
const { startChild } = require('./children');

/** Starts s3rver on a free loopback port with `buckets`, storing under `dir`; resolves {url, pid, stop}. */
async function startS3rver(dir, buckets) {
  const { child, match } = await startChild(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, '..', 's3', 'origin.js')], { ORIGIN_DIR: dir, ORIGIN_BUCKETS: buckets.join(',') }, /\{"port":(\d+)\}/);
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url: `http://127.0.0.1:${match[1]}`, pid: child.pid, stop };
}

module.exports = { startS3rver };
