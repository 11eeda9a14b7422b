'use strict';
// Anchor (a): the ceiling for W1/W2. A bare uWebSockets.js server that reads the
// whole request body and answers 200 with an empty body: no parsing, no storage,
// no durability. Whatever Svc does on top of its HTTP engine costs throughput
// relative to this figure, so "Svc / bare uWS" is the share of the ceiling Svc keeps.
//
// This is the one file outside src/ that imports uWebSockets.js, on purpose: it is
// the ceiling Svc is measured against (see perf/README.md).
//
// Usage: node perf/anchors/bare-uws.js <port>   (0 picks a free port)
// Prints `LISTENING <port>` on stdout once bound to 127.0.0.1.

const uws = require('@trufflesuite/uws-js-unofficial');

const port = Number(process.argv[2] ?? 0);
const app = uws.App();

app.any('/*', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  // Take the full body like a real handler would before answering (uWS hands it
  // over in chunks; the last one has isLast set). The bytes themselves are dropped.
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) {
      res.cork(() => {
        res.writeStatus('200 OK').end();
      });
    }
  });
});

app.listen('127.0.0.1', port, (listenSocket) => {
  if (!listenSocket) {
    process.stderr.write(`bare-uws: cannot listen on 127.0.0.1:${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`LISTENING ${uws.us_socket_local_port(listenSocket)}\n`);
  const stop = () => {
    uws.us_listen_socket_close(listenSocket);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
