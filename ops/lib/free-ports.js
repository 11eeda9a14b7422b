'use strict';
// Free loopback ports for the scripts that start servers (ops/, perf/). All `n` listeners stay
// bound until every port is chosen, so one call never hands out the same port twice (bind-and-
// release one at a time can: the kernel may give the port just released to the next bind).

const net = require('node:net');

/** `n` distinct ports free right now on 127.0.0.1 (bound, then all released together). */
async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const srv = net.createServer();
      srv.unref();
      servers.push(srv);
      await new Promise((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
  }
}

/** One port free right now on 127.0.0.1. */
async function freePort() {
  const [port] = await freePorts(1);
  return port;
}

module.exports = { freePorts, freePort };
