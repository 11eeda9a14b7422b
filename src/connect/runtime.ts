/**
 * The runtime: every connector's versions, status and runner (spec "States and transitions").
 *
 *   definitions ──▶ Connector {versions, active, status, last_error, counters}
 *                      └─ start(): resolve + load plugin ─▶ SourceRunner | SinkRunner
 *                                      │ fails              │ onHealth: running ⇄ degraded
 *                                      ▼                    ▼ onFatal
 *                         degraded, start again         error (no self-restart; a plugin
 *                         with backoff (`retry`)        host crash is respawned with backoff)
 *
 * Startup (spec steps 4–6) resolves every plugin, then starts sources, then sinks. With
 * `[connectors] startup = "strict"` (the spec's rule) every plugin that cannot be resolved is
 * reported at once and the first connector that cannot start ends startup. With `retry` (the
 * default) a connector that cannot start is `degraded` and started again on its own with
 * backoff while the others run; connectors of one type start side by side, so one slow open()
 * does not hold the others.
 */
import * as path from 'node:path';
import type { ConnectorsConfig } from './config-schema';
import { type Counters, type Health, type LastError, type Status, Tally, zeroCounters } from './connector-state';
import type { Definition } from './definition-schema';
import type { ConnectorType, ConnectorVersions } from './definitions';
import type { KafkaPort } from './kafka-client';
import type { Logger } from './log';
import type { Metrics } from './metrics';
import type { SinkPlugin, SourcePlugin } from './plugin-api';
import { PluginHostError } from './native';
import { loadSink, loadSource } from './plugin-load';
import { type ResolvedPlugin, resolvePlugin } from './plugin-resolve';
import type { PartitionProgress } from './sink-progress';
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
  /** Failed starts in a row (for the start-again backoff). */
  startFailures: number;
}

/** Respawn backoff after a plugin host crash or hang: 0.5 s doubling to 30 s. */
const RESPAWN_MIN_MS = 500;
const RESPAWN_MAX_MS = 30_000;
/** Start-again backoff of a connector that could not start: 1 s doubling to 60 s, with jitter. */
const RESTART_MIN_MS = 1000;
const RESTART_MAX_MS = 60_000;

export interface RuntimeDeps {
  config: ConnectorsConfig;
  kafka: KafkaPort;
  store: StateStore;
  metrics: Metrics;
  log: Logger;
  /** The runtime executable's directory (plugin search step 1). */
  exeDir: string;
}

/** A sink's committed offsets and lag per partition (empty for a source or a sink not running). */
export const partitionsOf = (c: Connector): PartitionProgress[] => (c.runner instanceof SinkRunner ? c.runner.progress() : []);

export const activeDefinition = (c: Connector): Definition => c.versions.versions.get(c.versions.active)!.definition;

export class Runtime {
  readonly connectors = new Map<string, Connector>();
  readonly startedAt = Date.now();

  constructor(readonly deps: RuntimeDeps) {
    deps.metrics.sample = () => [...this.connectors.values()].map((c) => ({ key: c.key, type: c.type, status: c.status, partitions: partitionsOf(c) }));
  }

  add(v: ConnectorVersions): Connector {
    const c: Connector = { id: `${v.type}:${v.key}`, type: v.type, key: v.key, versions: v, status: 'stopped', last_error: null, counters: zeroCounters(), runner: null, generation: 0, crashes: 0, startFailures: 0 };
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

  /**
   * Startup steps 4–6: resolve every plugin, then start sources, then sinks. `strict`: throws
   * every unresolved plugin at once, then the first connector that cannot start. `retry`: a
   * connector that cannot start is degraded and started again with backoff; never throws.
   */
  async startAll(mode: 'strict' | 'retry' = this.deps.config.connectors.startup): Promise<void> {
    const resolved = new Map<string, ResolvedPlugin>();
    const missing: string[] = [];
    for (const c of this.connectors.values()) {
      const def = activeDefinition(c);
      const r = resolvePlugin(def.path, this.deps.exeDir);
      if ('error' in r) missing.push(`${c.type} "${c.key}" (${c.versions.versions.get(c.versions.active)!.file}): ${r.error}`);
      else resolved.set(c.id, r.plugin);
    }
    if (mode === 'strict' && missing.length > 0) throw new Error(missing.length === 1 ? missing[0]! : `${missing.length} plugins cannot be found:\n  - ${missing.join('\n  - ')}`);
    for (const type of ['source', 'sink'] as const) {
      const todo = this.list(type).filter((c) => activeDefinition(c).enabled);
      if (mode === 'strict') for (const c of todo) await this.start(c, resolved.get(c.id), true);
      else await Promise.all(todo.map((c) => this.start(c, resolved.get(c.id))));
    }
  }

  /**
   * Starts the active version. With `strict` a failure is thrown (startup); else the connector
   * is `degraded` and started again with backoff until it starts, is stopped or restarted.
   */
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
      // Health reports arrive from the start on (a sink may fail to join before start() returns).
      let health: Health = { state: 'running' };
      const onHealth = (h: Health): void => {
        if (c.generation !== gen) return;
        health = h;
        if (c.status !== 'running' && c.status !== 'degraded') return;
        this.#health(c, h, log);
      };
      if (c.type === 'sink') {
        const plugin: SinkPlugin = await loadSink(r, def);
        c.runner = new SinkRunner(def, plugin, this.deps.kafka, this.deps.metrics, tally, log, onFatal, onHealth);
      } else {
        const plugin: SourcePlugin = await loadSource(r, def);
        c.runner = new SourceRunner(def, plugin, this.deps.kafka, this.deps.store, this.deps.metrics, tally, log, onFatal, onHealth);
      }
      const runner = c.runner;
      try {
        await runner.start();
      } catch (err) {
        // open() failed or timed out: the plugin is closed (its worker or host ended) before a new try.
        if (c.runner === runner) c.runner = null;
        await runner.stop().catch(() => undefined);
        throw err;
      }
      if (c.generation !== gen || c.status !== 'starting') return;
      // last_error stays: after a respawn or a start again it still tells why (spec: last_error).
      c.startFailures = 0;
      this.#set(c, 'running');
      this.#health(c, health, log);
      log.info({ plugin: r.kind === 'builtin' ? r.name : path.basename(r.file) }, 'connector running');
    } catch (err) {
      const e = new Error(`${c.type} "${c.key}": ${(err as Error).message}`);
      if (strict) throw e;
      if (c.generation !== gen) return;
      this.#startAgain(c, gen, err as Error);
    }
  }

  /** A running connector reports losing or regaining what it needs. */
  #health(c: Connector, h: Health, log: Logger): void {
    if (h.state === 'degraded') {
      c.last_error = { message: h.reason, time: new Date().toISOString() };
      if (c.status !== 'degraded') log.warn({ reason: h.reason }, 'connector degraded; retrying on its own');
      this.#set(c, 'degraded');
    } else if (c.status === 'degraded') {
      log.info('connector recovered');
      this.#set(c, 'running');
    }
  }

  /** The connector could not start: degraded, and started again with backoff (startup = "retry"). */
  #startAgain(c: Connector, gen: number, err: Error): void {
    const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** c.startFailures++) * (0.5 + Math.random() / 2);
    c.last_error = { message: err.message, time: new Date().toISOString() };
    c.runner = null;
    this.#set(c, 'degraded');
    this.deps.log.warn({ connector: c.key, type: c.type, err: err.message, attempt: c.startFailures, in_ms: Math.round(delay) }, 'connector cannot start; starting it again later');
    setTimeout(() => {
      if (c.generation !== gen || c.status !== 'degraded') return;
      void this.start(c);
    }, delay).unref();
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
    c.startFailures = 0;
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
