/**
 * svc-connectors: the connector runtime's entry point (bin/svc-connectors). Starts with no
 * arguments; startup order as the spec lists it, exiting on a failure with a message that says
 * what failed and where (steps 4–6 only with `[connectors] startup = "strict"`; with `retry` a
 * connector that cannot start is degraded and started again, runtime.ts):
 *   1. config.toml, then environment overrides        (config.ts)
 *   2. the Kafka client configuration (lazy connects)  (kafka-client.ts)
 *   3. every definition (config dir or HTTP provider)  (definitions.ts, definitions-http.ts)
 *   4. resolve and load every plugin                   (plugin-resolve.ts, plugin-load.ts)
 *   5. sources: checkpoint, open()                     (source-runner.ts)
 *   6. sinks: join the consumer group, open()          (sink-runner.ts)
 *   7. the HTTP API                                    (api.ts)
 */
import * as path from 'node:path';
import { startApi, type ApiServer } from './api';
import { ConfigError, loadConfig, redactedConfig } from './config';
import { DefinitionError, loadDefinitions } from './definitions';
import { fetchDefinitions, httpForwarder } from './definitions-http';
import { createKafka } from './kafka-client';
import { createLogger, levelFromEnv, type Logger } from './log';
import { Metrics } from './metrics';
import { Runtime } from './runtime';
import { OtlpExporter } from './telemetry';
import { createStateStore } from './state-store';

function die(log: Logger | null, step: string, err: unknown): never {
  const msg = err instanceof ConfigError || err instanceof DefinitionError ? err.message : (err as Error).message;
  if (log !== null) log.error({ err: msg }, `startup failed at ${step}`);
  process.stderr.write(`svc-connectors: startup failed at ${step}: ${msg}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const env = process.env;
  let loaded;
  try {
    loaded = loadConfig(env);
  } catch (err) {
    die(null, 'step 1 (config.toml and environment overrides)', err);
  }
  const { config } = loaded;
  const log = createLogger(levelFromEnv(env), config.logging.format);
  log.info({ file: loaded.path ?? 'built-in defaults', overrides: loaded.overrides, config: redactedConfig(config) }, 'config loaded');
  const telemetry = config.telemetry.enabled ? new OtlpExporter(config.telemetry) : null;
  if (telemetry !== null) log.tap.fn = (level, msg, fields) => telemetry.log(level, msg, fields);

  const kafka = createKafka(config.kafka, log.child({ component: 'kafka' }));

  let definitions;
  try {
    definitions = config.connectors.config_type === 'http' ? await fetchDefinitions(config.connectors.http, env) : loadDefinitions(config.connectors.config_dir, env);
  } catch (err) {
    die(log, 'step 3 (connector definitions)', err);
  }

  const metrics = new Metrics();
  if (telemetry !== null) metrics.onBatch = (key, type, seconds) => telemetry.span(`${type} batch`, seconds, { connector_key: key, connector_type: type });
  const runtime = new Runtime({ config, kafka, store: createStateStore(config.state), metrics, log, exeDir: __dirname });
  for (const v of definitions.values()) runtime.add(v);
  try {
    await runtime.startAll();
  } catch (err) {
    await runtime.stopAll().catch(() => undefined);
    die(log, 'steps 4-6 (plugins, sources, sinks)', err);
  }

  let api: ApiServer | null = null;
  if (config.http.enabled) {
    try {
      api = await startApi(config.http, runtime, metrics, log.child({ component: 'api' }), config.connectors.config_type === 'http' ? httpForwarder(config.connectors.http) : null);
    } catch (err) {
      await runtime.stopAll().catch(() => undefined);
      die(log, `step 7 (HTTP API on ${config.http.address})`, err);
    }
  }
  log.info({ address: api?.address ?? null, sinks: runtime.list('sink').length, sources: runtime.list('source').length, state: path.resolve(config.state.path) }, 'svc-connectors started');

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    void (async () => {
      await api?.close();
      await runtime.stopAll();
      log.info('stopped');
      await telemetry?.close();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main();
