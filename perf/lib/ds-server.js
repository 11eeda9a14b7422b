'use strict';
// Child-process entry that runs the Durable Streams reference server
// (@durable-streams/server, pinned in perf/package.json) with its own event loop,
// the way a user would run it: `new DurableStreamTestServer({host, port, dataDir})`.
// Without a data dir it is the in-memory store; with one it is the file-backed
// (durable) store: one append-only segment file per stream, fdatasync per append,
// and LMDB for metadata.
//
// Usage: node perf/lib/ds-server.js <port> [dataDir]
// Sends {type:'listening', url} over IPC once bound.
//
// IPC `preload` request (not measured): appends `count` messages of `size` bytes to
// an existing stream through the server's own store API. 100k HTTP appends to the
// file store would take minutes (one fdatasync each), so during preload the file
// store's per-append fdatasync is skipped and one fdatasync is issued at the end.
// The segment file and LMDB metadata end up byte-for-byte as HTTP appends leave them.

const { DurableStreamTestServer } = require('@durable-streams/server');
const { recordBody } = require('./bodies');

const port = Number(process.argv[2] ?? 0);
const dataDir = process.argv[3] || undefined;

async function preload({ path, count, size, json }) {
  const store = server.store;
  const meta = store.get(path);
  if (!meta) throw new Error(`preload: stream ${path} does not exist`);
  // File store only: skip the per-append fdatasync and the per-append LMDB commit
  // (metadata writes are kept in a map the store reads back, and the last value
  // per key is committed at the end). The store's own append code does the rest.
  const pool = store.fileHandlePool;
  const db = pool ? store.db : undefined;
  const real = pool ? { fsync: pool.fsyncFile, put: db.put, get: db.get } : undefined;
  const pendingMeta = new Map();
  let segment;
  if (pool) {
    pool.fsyncFile = (filePath) => {
      segment = filePath;
      return Promise.resolve();
    };
    db.put = (key, value) => {
      pendingMeta.set(key, value);
      return Promise.resolve(true);
    };
    db.get = (key) => (pendingMeta.has(key) ? pendingMeta.get(key) : real.get.call(db, key));
  }
  try {
    const contentType = meta.contentType;
    for (let i = 0; i < count; i++) {
      const body = recordBody(i, size);
      // A JSON stream stores one JSON value per message; the element is the body as a string.
      const data = json ? Buffer.from(JSON.stringify(body.toString('latin1'))) : body;
      await store.append(path, data, { contentType });
    }
  } finally {
    if (pool) {
      pool.fsyncFile = real.fsync;
      db.put = real.put;
      db.get = real.get;
    }
  }
  if (pool) {
    // Make the preloaded data durable before reads start: one flush, then the metadata.
    if (segment) await real.fsync.call(pool, segment);
    for (const [key, value] of pendingMeta) await db.put(key, value);
  }
  return store.get(path).currentOffset;
}

const server = new DurableStreamTestServer({ host: '127.0.0.1', port, dataDir });

server.start().then(
  (url) => {
    process.send({ type: 'listening', url });
  },
  (err) => {
    process.stderr.write(`ds-server: start failed: ${err && err.stack}\n`);
    process.exit(1);
  },
);

process.on('message', (msg) => {
  if (msg && msg.type === 'preload') {
    preload(msg).then(
      (offset) => process.send({ type: 'preloaded', id: msg.id, offset }),
      (err) => process.send({ type: 'preloaded', id: msg.id, error: String(err && err.stack) }),
    );
  }
});

async function shutdown() {
  try {
    await server.stop();
  } finally {
    process.exit(0);
  }
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.on('disconnect', shutdown);
