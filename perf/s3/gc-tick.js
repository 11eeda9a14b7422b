// Preloaded into svc-cache by the soak (`node --expose-gc -r perf/s3/gc-tick.js bin/svc-cache`):
// a full collection every SOAK_GC_MS (default 2000), so a file handle dropped without close() is
// found and reported ("Closing file descriptor N on garbage collection") within the run, not
// whenever the heap happens to grow enough for a major collection.
'use strict';

const gc = globalThis.gc;
if (typeof gc === 'function') setInterval(() => gc(), Number(process.env.SOAK_GC_MS || 2000)).unref();
