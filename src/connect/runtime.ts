/**
 * The runtime: every connector's versions, status and runner (spec "States and transitions").
 *
 *   definitions ──▶ Connector {versions, active, status, last_error, counters}
 *                      └─ start(): resolve + load plugin ─▶ SourceRunner | SinkRunner
 *
 * Startup (spec steps 4–6) loads every plugin first, then starts sources, then sinks, and the
 * first failure ends startup with an error naming the connector. After startup a failing
 * connector goes to `error` and stays there (no self-restart) until restarted through the API
 * or a process restart.
 */
import * as path from 'node:path';
import type { ConnectorsConfig } from './config-schema';
import { type Counters, type LastError, type Status, Tally, zeroCounters } from './connector-state';
import type { Definition } from './definition-schema';
import type { ConnectorType, ConnectorVersions } from './definitions';
import type { KafkaPort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import type { SinkPlugin, SourcePlugin } from './plugin-api';
import { PluginHostError } from './native';
import { loadSink, loadSource } from './plugin-load';
import { type ResolvedPlugin, resolvePlugin } from './plugin-resolve';
import { SinkRunner } from './sink-runner';
import { SourceRunner } from './source-runner';
import type { StateStore } from './state-store';

export interface Connector {
  id: string;
  type: ConnectorType;
  key: string;
  versions: ConnectorVersions;
  status: Status;
  last_error: LastError | null;
  counters: Counters;
  runner: SinkRunner | SourceRunner | null;
  /** Incremented on each start, so a late failure of an old run is ignored. */
  generation: number;
  /** Plugin host crashes since the last start through the API (for the respawn backoff). */
  crashes: number;
}

/** Respawn backoff after a plugin host crash or hang: 0.5 s doubling to 30 s. */
const RESPAWN_MIN_MS = 500;
const RESPAWN_MAX_MS = 30_000;

export interface RuntimeDeps {
  config: ConnectorsConfig;
  kafka: KafkaPort;
  store: StateStore;
  metrics: Metrics;
  log: Logger;
  /** The runtime executable's directory (plugin search step 1). */
  exeDir: string;
}

export const activeDefinition = (c: Connector): Definition => c.versions.versions.get(c.versions.active)!.definition;

export class Runtime {
  readonly connectors = new Map<string, Connector>();
  readonly startedAt = Date.now();

  constructor(readonly deps: RuntimeDeps) {}

  add(v: ConnectorVersions): Connector {
    const c: Connector = { id: `${v.type}:${v.key}`, type: v.type, key: v.key, versions: v, status: 'stopped', last_error: null, counters: zeroCounters(), runner: null, generation: 0, crashes: 0 };
    this.connectors.set(c.id, c);
    this.#gauges();
    return c;
  }

  get(type: ConnectorType, key: string): Connector | undefined {
    return this.connectors.get(`${type}:${key}`);
  }

  list(type: ConnectorType): Connector[] {
    return [...this.connectors.values()].filter((c) => c.type === type).sort((a, b) => (a.key < b.key ? -1 : 1));
  }

  /** Startup steps 4–6: resolve every plugin, then start sources, then sinks; throws on the first failure. */
  async startAll(): Promise<void> {
    const resolved = new Map<string, ResolvedPlugin>();
    for (const c of this.connectors.values()) {
      const def = activeDefinition(c);
      const r = resolvePlugin(def.path, this.deps.exeDir);
      if ('error' in r) throw new Error(`${c.type} "${c.key}" (${c.versions.versions.get(c.versions.active)!.file}): ${r.error}`);
      resolved.set(c.id, r.plugin);
    }
    for (const type of ['source', 'sink'] as const) {
      for (const c of this.list(type)) {
        if (!activeDefinition(c).enabled) continue;
        await this.start(c, resolved.get(c.id)!, true);
      }
    }
  }

  /** Starts the active version; with `strict` a failure is thrown (startup), else it sets `error`. */
  async start(c: Connector, resolved?: ResolvedPlugin, strict = false): Promise<void> {
    const def = activeDefinition(c);
    const gen = ++c.generation;
    const log = this.deps.log.child({ connector: c.key, type: c.type, version: def.version });
    this.#set(c, 'starting');
    try {
      let r = resolved;
      if (r === undefined) {
        const res = resolvePlugin(def.path, this.deps.exeDir);
        if ('error' in res) throw new Error(res.error);
        r = res.plugin;
      }
      const tally = new Tally(c.key, c.type, c.counters, this.deps.metrics);
      const onFatal = (err: Error): void => {
        if (c.generation !== gen) return;
        log.error({ err: err.message }, 'connector failed');
        void this.#fail(c, gen, err);
      };
      if (c.type === 'sink') {
        const plugin: SinkPlugin = await loadSink(r, def);
        c.runner = new SinkRunner(def, plugin, this.deps.kafka, this.deps.metrics, tally, log, onFatal);
      } else {
        const plugin: SourcePlugin = await loadSource(r, def);
        c.runner = new SourceRunner(def, plugin, this.deps.kafka, this.deps.store, this.deps.metrics, tally, log, onFatal);
      }
      await c.runner.start();
      if (c.generation === gen && c.status === 'starting') this.#set(c, 'running');
      log.info({ plugin: r.kind === 'builtin' ? r.name : path.basename(r.file) }, 'connector running');
    } catch (err) {
      const e = new Error(`${c.type} "${c.key}": ${(err as Error).message}`);
      if (strict) throw e;
      log.error({ err: (err as Error).message }, 'connector failed to start');
      await this.#fail(c, gen, err as Error);
    }
  }

  async #fail(c: Connector, gen: number, err: Error): Promise<void> {
    if (c.generation !== gen) return;
    c.last_error = { message: err.message, time: new Date().toISOString() };
    const runner = c.runner;
    c.runner = null;
    this.#set(c, 'error');
    await runner?.stop().catch(() => undefined);
    // A native plugin's host or a JS plugin's worker died or hung: the connector is respawned with backoff (the design's
    // supervisor); its records are uncommitted, so they come again. Other failures stay in error.
    if (err instanceof PluginHostError || (err.cause instanceof PluginHostError)) {
      const delay = Math.min(RESPAWN_MAX_MS, RESPAWN_MIN_MS * 2 ** c.crashes++);
      this.deps.log.warn({ connector: c.key, type: c.type, in_ms: delay, err: err.message }, 'plugin host failed; respawning the connector');
      setTimeout(() => {
        if (c.generation !== gen || c.status !== 'error') return;
        new Tally(c.key, c.type, c.counters, this.deps.metrics).add('plugin_restarts');
        void this.start(c);
      }, delay).unref();
    }
  }

  async stop(c: Connector): Promise<void> {
    c.generation++;
    const runner = c.runner;
    c.runner = null;
    if (runner === null) {
      if (c.status !== 'error') this.#set(c, 'stopped');
      return;
    }
    this.#set(c, 'stopping');
    await runner.stop().catch((err: Error) => this.deps.log.warn({ connector: c.key, err: err.message }, 'stop failed'));
    this.#set(c, 'stopped');
  }

  /** Stop, then start with the active version (spec: restart). A disabled definition stays stopped. */
  async restart(c: Connector): Promise<void> {
    await this.stop(c);
    c.last_error = null;
    c.crashes = 0;
    if (activeDefinition(c).enabled) await this.start(c);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.connectors.values()].map((c) => this.stop(c)));
  }

  #set(c: Connector, s: Status): void {
    c.status = s;
    this.#gauges();
  }

  #gauges(): void {
    const m = this.deps.metrics;
    const all = [...this.connectors.values()];
    m.sinksTotal.set(all.filter((c) => c.type === 'sink').length);
    m.sourcesTotal.set(all.filter((c) => c.type === 'source').length);
    m.sinksRunning.set(all.filter((c) => c.type === 'sink' && c.status === 'running').length);
    m.sourcesRunning.set(all.filter((c) => c.type === 'source' && c.status === 'running').length);
  }
}
