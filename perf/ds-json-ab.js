#!/usr/bin/env node
'use strict';
// Two builds side by side on Durable Streams JSON appends: POSTs of one JSON array of
// PERF_DS_ELEMENTS (default 100) objects of about PERF_DS_ELEMENT_BYTES (default 100) bytes each to
// one `application/json` stream of a `--protocol ds` node (wrk -t1, PERF_DS_CONNECTIONS, default 16),
// a fresh node per measured run, alternating A B, B A, … so drift in the machine's load falls on both.
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/ds-json-ab.js
//
// PERF_DS_SPACED=1 sends the array pretty-printed (whitespace between tokens) instead of compact.
// Prints per run and per build: appends/s, messages/s (items/s), the node's CPU per append (µs, user
// + system of all its threads, from /proc) and that of its main thread alone (the gateway thread).
// After each run the first message is read back and compared. The harness: perf/lib/builds-ab.js.

const fs = require('node:fs');
const path = require('node:path');
const { http, intEnv } = require('./lib/util');
const { compareBuilds } = require('./lib/builds-ab');

/** A JSON array of `n` objects of about `bytes` bytes each (compact, or pretty-printed). */
function arrayBody(n, bytes, spaced) {
  const items = [];
  for (let i = 0; i < n; i++) {
    const head = { id: i, kind: 'order', ok: true, pad: '' };
    const pad = Math.max(0, bytes - JSON.stringify(head).length);
    items.push({ ...head, pad: 'x'.repeat(pad) });
  }
  return spaced ? JSON.stringify(items, null, 2) : JSON.stringify(items);
}

const elements = intEnv('PERF_DS_ELEMENTS', 100, 100000);
const elementBytes = intEnv('PERF_DS_ELEMENT_BYTES', 100, 1000000);
const connections = intEnv('PERF_DS_CONNECTIONS', 16, 256);
const spaced = process.env.PERF_DS_SPACED === '1';
const text = arrayBody(elements, elementBytes, spaced);

compareBuilds({
  name: 'ds-json-ab',
  describe: `${elements} × ~${elementBytes} B elements, body ${text.length} B${spaced ? ' (pretty-printed)' : ''}, ${connections} connections`,
  serveArgs: ['--protocol', 'ds'],
  writeBody(dir) {
    const file = path.join(dir, 'array.json');
    fs.writeFileSync(file, text);
    return file;
  },
  path: '/v1/stream/ab',
  contentType: 'application/json',
  connections,
  perRequest: elements,
  // What was stored: the first message as a reader gets it.
  async check(url, id) {
    const read = await http('GET', `${url}?offset=-1`);
    const first = JSON.parse(read.body.toString())[0];
    if (JSON.stringify(first) !== JSON.stringify(JSON.parse(text)[0])) throw new Error(`build ${id}: the first message reads back as ${JSON.stringify(first)}`);
  },
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
