/**
 * The live-read suite (live.test.ts: long-poll and SSE, seal, delete, backpressure, shutdown) once
 * more, on nodes whose protocol listener runs two I/O threads (`--sse-threads 2`,
 * src/gateway/http/io-threads.ts): every connection then lives on an I/O thread and every response
 * crosses back from the main thread, and what a client sees must not change. (The node engine
 * has no I/O threads: its half of the suite runs as in live.test.ts.)
 */
const before = process.env['SVC_SSE_THREADS'];
process.env['SVC_SSE_THREADS'] = '2';
afterAll(() => {
  if (before === undefined) delete process.env['SVC_SSE_THREADS'];
  else process.env['SVC_SSE_THREADS'] = before;
});
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./live.test');
