/**
 * svc-cache: an S3-compatible endpoint that answers object reads from a cache and forwards
 * everything else to an origin, re-signed. Front door of src/s3; see src/s3/README.md.
 */
export { startCacheServer, type CacheServer, type StartOptions } from './server';
export { loadCacheConfig, cacheConfig, type CacheConfig } from './config';
export { createLogger, type Logger } from './log';
export { S3_ERRORS, type S3ErrorCode } from './errors';
