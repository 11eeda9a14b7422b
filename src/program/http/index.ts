/**
 * The gateway's HTTP engines behind one contract (see engine.ts): uWebSockets.js for speed,
 * node:http where uWS cannot run.
 */
import { type HttpEngine } from './engine';
import { createNodeEngine } from './node-engine';
import { withIoThreads } from './io-threads';
import { createUwsEngine } from './uws-engine';
import { type EngineLog } from './write-pacing';

export {
  type BodyDone,
  type HeaderList,
  type HttpEngine,
  type HttpRequest,
  type HttpResponse,
  type HttpServerHandle,
  type ListenOptions,
  type RequestBody,
  type RequestHandler,
} from './engine';

/** What loadHttpEngine needs of a logger (the product's pino logger fits): the fallback warning, and every response the engine cuts. */
export type EngineLoadLog = EngineLog;
export { WRITE_IDLE_MS, type WriteCut } from './write-pacing';
export { listenError } from './listen-errors';

/**
 * Returns the preferred engine. uWS ships binaries for Node 18 and 20 on a few platforms only;
 * where its native module does not load, this falls back to node:http with one warning,
 * so the node keeps serving (slower) instead of failing to start.
 */
export async function loadHttpEngine(preferred: 'uws' | 'node', log: EngineLoadLog): Promise<HttpEngine> {
  if (preferred === 'node') return createNodeEngine(log);
  try {
    return withIoThreads(createUwsEngine(log), log);
  } catch (err) {
    // Expected on Node 22 and later (uWS 20.30 ships binaries for Node 18 and 20 only): one
    // line naming the runtime and the reason, not a stack (docs/config.md, "HTTP engines").
    log.warn(
      { reason: (err as Error).message.split('\n')[0], node: process.version, platform: `${process.platform}-${process.arch}`, abi: process.versions.modules },
      `uWebSockets.js has no binary for Node ${process.version} on ${process.platform}-${process.arch}; serving HTTP with node:http instead (slower)`,
    );
    return createNodeEngine(log);
  }
}
