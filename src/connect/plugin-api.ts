/**
 * The interfaces every plugin implements, whatever its language: JS modules implement them
 * directly; native libraries are adapted to them (native-plugin.ts, over the C ABI of
 * sdk/svc_connector.h). Runners, retries, metrics and isolation only know these.
 */

/** A record handed to a sink. */
export interface SinkRecord {
  topic: string;
  partition: number;
  /** Kafka offset, decimal. */
  offset: string;
  key: Buffer | null;
  value: Buffer;
  /** ms since epoch. */
  timestamp: number;
  headers: Record<string, string>;
}

/**
 * One status per record written: `ok` (durable once flush() resolves), `retryable` (try again
 * later), `permanent` (will never succeed; dead-letter or stop per the error policy).
 */
export type RecordStatus = 'ok' | 'retryable' | 'permanent';
export interface RecordResult {
  status: RecordStatus;
  /** Why, for retryable and permanent. */
  message?: string;
}

export interface PluginContext {
  /** The connector's key. */
  key: string;
  /**
   * How long each call may take (the definition's `plugin_timeout`), ms: past it the runtime
   * treats the plugin as hung. A plugin that may need longer (many requests in one write) does
   * part of the work within it and reports the rest `retryable`.
   */
  timeoutMs: number;
  log: (level: 'error' | 'warn' | 'info' | 'debug', msg: string) => void;
}

export interface SinkPlugin {
  /**
   * Plugins run in a host of their own (a worker thread): resolves once the host is up. The
   * runtime awaits it before open(), so starting the host does not count against plugin_timeout.
   */
  ready?(): Promise<void>;
  open(ctx: PluginContext, config: Record<string, unknown>): Promise<void>;
  /** Writes a batch; returns exactly one result per record, in order. */
  write(records: SinkRecord[]): Promise<RecordResult[]>;
  /** Resolves when everything write() reported `ok` is durable. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** A record a source hands to the runtime. */
export interface SourceRecord {
  key: Buffer | null;
  value: Buffer;
  headers?: Record<string, string>;
  timestamp?: number;
}

export interface SourceBatch {
  records: SourceRecord[];
  /** The checkpoint after this batch: saved by the runtime once the batch is acknowledged. */
  state: Buffer;
}

export interface SourcePlugin {
  /** As SinkPlugin.ready. */
  ready?(): Promise<void>;
  /** `state` is the last saved checkpoint, or null to start from the beginning. */
  open(ctx: PluginContext, config: Record<string, unknown>, state: Buffer | null): Promise<void>;
  /**
   * The next batch (at most `max` records), or null when there is no data within `timeoutMs`.
   * After open() with a checkpoint, the records follow it in the same order as the first time
   * (the n-th record after a checkpoint is the same record, with the same key): the runtime
   * relies on it to not produce again what had landed before a crash (source-position.ts).
   */
  poll(max: number, timeoutMs: number): Promise<SourceBatch | null>;
  /**
   * The outcome of the last batch: ack = produced and checkpointed; nack = not produced, so the
   * next poll() must return the same records again (from the last acknowledged checkpoint).
   */
  commit(ack: boolean): Promise<void>;
  close(): Promise<void>;
}

/** What a JS plugin module exports (either or both). */
export interface PluginModule {
  createSink?: () => SinkPlugin;
  createSource?: () => SourcePlugin;
}
