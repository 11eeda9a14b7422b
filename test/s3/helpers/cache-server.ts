/** Starts svc-cache in-process on 127.0.0.1:0 with a temporary cache directory. */
import * as fs from 'node:fs';
import { type CacheConfig, type CacheServer, cacheConfig, createLogger, startCacheServer } from '../../../src/s3';
import { type DeepPartial } from '../../../src/s3/config';
import { ORIGIN_ACCESS_KEY, ORIGIN_SECRET_KEY, type TestOrigin, tempDir } from './origin';

export interface TestCache extends CacheServer {
  config: CacheConfig;
  dir: string;
  logs: string[];
  /** Stops the server; the cache directory is kept when `keepDir`. */
  stop(keepDir?: boolean): Promise<void>;
}

export async function startCache(origin: TestOrigin, over: DeepPartial<CacheConfig> = {}, dir = tempDir('svc-cache-')): Promise<TestCache> {
  const config = cacheConfig({
    ...over,
    log_level: 'debug',
    // SVC_CACHE_SERVER_ENGINE=node runs a suite on the node:http engine (default: uws, as in production).
    server: { listen: '127.0.0.1:0', engine: process.env.SVC_CACHE_SERVER_ENGINE === 'node' ? 'node' : 'uws', ...(over.server ?? {}) },
    metrics: { listen: '127.0.0.1:0', ...(over.metrics ?? {}) },
    origin: { endpoint: origin.url, access_key_id: ORIGIN_ACCESS_KEY, secret_access_key: ORIGIN_SECRET_KEY, ...(over.origin ?? {}) },
    cache: { dir, ...(over.cache ?? {}) },
  });
  const logs: string[] = [];
  const server = await startCacheServer(config, { log: createLogger('debug', (l) => void logs.push(l)), env: {} });
  return {
    ...server,
    config,
    dir,
    logs,
    async stop(keepDir = false) {
      await server.close();
      if (!keepDir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
