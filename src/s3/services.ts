/** What the request handlers share: built once by the server. */
import { type ObjectCache } from './cache/object-cache';
import { type CacheConfig } from './config';
import { type Logger } from './log';
import { type Metrics } from './metrics';
import { type Origin } from './origin';

export interface Services {
  config: CacheConfig;
  origin: Origin;
  cache: ObjectCache;
  metrics: Metrics;
  log: Logger;
}
