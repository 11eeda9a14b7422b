'use strict';
// A local S3 server for benchmarks: s3rver (npm) in a child process (perf/s3/origin.js, which
// accepts any signature: the benchmarks measure speed, the tests check signing).

const { spawn } = require('node:child_process');
const path = require('node:path');

/** Starts s3rver on a free loopback port with `buckets`, storing under `dir`; resolves {url, stop}. */
function startS3rver(dir, buckets) {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, '..', 's3', 'origin.js')], {
    env: { ...process.env, ORIGIN_DIR: dir, ORIGIN_BUCKETS: buckets.join(',') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`s3rver did not start:\n${out}`));
    }, 20000);
    const onData = (d) => {
      out += d;
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}`, pid: child.pid, stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with ${code}:\n${out}`));
    });
  });
}

module.exports = { startS3rver };
