/**
 * The svc-cache command: load the configuration (file + environment), start the listeners,
 * stop gracefully on SIGTERM/SIGINT. Usage: svc-cache [--config FILE]
 */
import { createLogger, loadCacheConfig, startCacheServer } from './index';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write('usage: svc-cache [--config FILE]\nConfiguration keys and SVC_CACHE_* variables: docs/s3-cache.md\n');
    return;
  }
  const loaded = loadCacheConfig(argv, process.env);
  if ('errors' in loaded) {
    process.stderr.write(`svc-cache: invalid configuration:\n${loaded.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    process.exit(2);
  }
  const log = createLogger(loaded.config.log_level);
  const server = await startCacheServer(loaded.config, { log });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'svc-cache stopping');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`svc-cache: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
