'use strict';
// Helper processes of a benchmark (origins, caches, servers): started with a readiness pattern on
// their output, and all stopped when the benchmark ends (at the latest when its process exits).

const { spawn } = require('node:child_process');

const children = new Set();

/** Keep `child` to be stopped with the others (one spawned elsewhere, e.g. with inherited output). */
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * Spawns `cmd args` with `env` added and resolves {child, match} once its stdout or stderr matches
 * `pattern`; rejects when it exits first or does not match within `timeoutMs`.
 */
function startChild(cmd, args, env, pattern, timeoutMs = 20000) {
  const child = track(spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${cmd} did not start:\n${out}`));
    }, timeoutMs);
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited with ${code}:\n${out}`));
    });
  });
}

/** SIGTERM to every helper still running. */
function stopChildren() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
}
process.on('exit', stopChildren);

module.exports = { startChild, stopChildren, track };
