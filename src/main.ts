/**
 * Composition root of the `svc` binary (bin/svc loads this file, and loading it runs the
 * CLI). The only place that turns configuration into running parts: `serve` loads the
 * config, creates the logger and hands both to `startNode`, which builds everything else.
 *
 *   argv ──▶ dispatch (cli/commands.ts) ──▶ serve: loadConfig ──▶ createLogger ──▶ startNode
 *                                                                     SIGTERM/SIGINT ──▶ close
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Config } from './config';
import { type Logger } from './log';
import { type RunningNode } from './node';
import { dispatch, EXIT_FAILURE, EXIT_USAGE, type CliIo, type Command, type Program } from './cli/commands';
import { clientCommands } from './cli/client';
import { storageCommands } from './cli/storage-commands';

function version(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Stop on SIGTERM or SIGINT: close the node, exit 0 when it has closed, exit 1 when it
 * fails or takes longer than `shutdownTimeoutMs`. A second signal exits 1 at once
 * (acknowledged appends are already durable, so nothing acknowledged is lost).
 */
function handleSignals(started: Promise<RunningNode>, config: Config, log: Logger): () => boolean {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal during shutdown: exiting now');
      process.exit(EXIT_FAILURE);
    }
    stopping = true;
    log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    const watchdog = setTimeout(() => {
      log.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown did not finish in time: exiting');
      process.exit(EXIT_FAILURE);
    }, config.shutdownTimeoutMs);
    started
      .then((node) => node.close())
      .then(
        () => {
          clearTimeout(watchdog);
          log.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          process.exit(EXIT_FAILURE);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => stopping;
}

const serve: Command = {
  name: 'serve',
  summary: 'start a stream node',
  usage: async () => (await import('./cli/usage')).serveUsage(),
  async run(args: string[], io: CliIo): Promise<number> {
    // Loaded here, not at the top: a client command starts without the node's modules (a CLI
    // run costs a few tens of milliseconds of start-up, not the half second the node's take).
    const { formatHostPort, loadConfig } = await import('./config');
    const { createLogger } = await import('./log');
    const loaded = loadConfig(args, process.env);
    if ('errors' in loaded) {
      for (const e of loaded.errors) io.stderr(`svc serve: ${e}\n`);
      io.stderr('Run `svc serve --help` for the flags.\n');
      return EXIT_USAGE;
    }
    const { config } = loaded;
    const log = createLogger(config.logLevel, undefined, config.logFormat);
    log.debug({ config }, 'configuration');
    const { startNode } = await import('./node');
    const started = startNode(config, log);
    const stopping = handleSignals(started, config, log);
    try {
      const node = await started;
      if (stopping()) return new Promise<never>(() => undefined); // the signal handler exits
      const listen = formatHostPort({ host: config.listen.host, port: node.port });
      const admin = node.adminPort === null ? null : formatHostPort({ host: config.adminListen.host, port: node.adminPort });
      log.info(
        { listen, admin, dataDir: config.dataDir, shards: config.shards, shardWorkers: config.shardWorkers, httpEngine: node.httpEngine, runtime: process.version, auth: config.auth, version: version() },
        `svc listening on ${listen}` + (admin ? `, admin on ${admin}` : ', admin listener disabled'),
      );
      return new Promise<never>(() => undefined); // runs until a signal
    } catch (err) {
      log.error({ err }, 'node failed to start');
      process.exit(EXIT_FAILURE);
    }
  },
};

const program: Program = {
  name: 'svc',
  version: version(),
  commands: [serve, ...storageCommands({
      check: async (dir) => (await import('./shards')).checkDataDir(dir),
      checkObjects: async (objectsUrl, metadataUrl, streams) => {
        const { EtcdLink, parseEtcdUrl } = await import('./actors');
        const { LedgerKeys, checkObjectLedger, openObjectStore } = await import('./objects');
        const target = parseEtcdUrl(metadataUrl);
        const store = openObjectStore(objectsUrl);
        const link = new EtcdLink(target.endpoints);
        try {
          return await checkObjectLedger(link, new LedgerKeys(target.prefix), store, streams.length > 0 ? { streams } : {});
        } finally {
          link.close();
          await store.close();
        }
      },
      repair: async (dir) => (await import('./shards')).repairDataDir(dir),
    }), ...clientCommands()],
  featured: 'serve',
};

const io: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

dispatch(program, process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`svc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT_FAILURE;
  },
);
