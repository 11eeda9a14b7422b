/**
 * Prometheus metrics of svc-connectors (spec "Metrics", plus retries, dead-lettered records,
 * plugin restarts, each connector's status and each sink's committed offset and lag). The only file under src/connect that imports prom-client; each runtime has
 * its own registry, so tests can run several in one process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_SAMPLE_MS } from '../util/event-loop-sampling';
import { STATUSES } from './connector-state';
import type { PartitionProgress } from './sink-progress';

/** One connector as a scrape sees it (given by the runtime). */
export interface ConnectorSample {
  key: string;
  type: 'sink' | 'source';
  status: string;
  /** A sink's partitions; empty for a source. */
  partitions: PartitionProgress[];
}

const STAGE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30]; // seconds

/** Stage label values (spec): sinks decode, prepare, ffi, total; sources decode, prepare, broker_send, state_save, total. */
export type SinkStage = 'decode' | 'prepare' | 'ffi' | 'total';
export type SourceStage = 'decode' | 'prepare' | 'broker_send' | 'state_save' | 'total';

export class Metrics {
  readonly registry = new Registry();
  readonly sourcesTotal = new Gauge({ name: 'svc_connectors_sources_total', help: 'sources defined', registers: [this.registry] });
  readonly sourcesRunning = new Gauge({ name: 'svc_connectors_sources_running', help: 'sources running', registers: [this.registry] });
  readonly sinksTotal = new Gauge({ name: 'svc_connectors_sinks_total', help: 'sinks defined', registers: [this.registry] });
  readonly sinksRunning = new Gauge({ name: 'svc_connectors_sinks_running', help: 'sinks running', registers: [this.registry] });
  readonly produced = new Counter({ name: 'svc_connector_messages_produced_total', help: "records a source's poll() returned", labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly sent = new Counter({ name: 'svc_connector_messages_sent_total', help: 'source records acknowledged by the broker', labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly consumed = new Counter({ name: 'svc_connector_messages_consumed_total', help: 'records fetched for a sink', labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly processed = new Counter({ name: 'svc_connector_messages_processed_total', help: "records accepted by a sink's consume()", labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly filtered = new Counter({ name: 'svc_connector_messages_filtered_total', help: 'records dropped by transforms', labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly errors = new Counter({ name: 'svc_connector_errors_total', help: 'connector errors', labelNames: ['connector_key', 'connector_type'] as const, registers: [this.registry] });
  readonly retries = new Counter({ name: 'svc_connector_retries_total', help: 'records or batches retried after a retryable failure', labelNames: ['connector_key', 'connector_type'] as const, registers: [this.registry] });
  readonly deadLettered = new Counter({ name: 'svc_connector_dead_lettered_total', help: 'sink records sent to the dead-letter topic', labelNames: ['connector_key'] as const, registers: [this.registry] });
  readonly pluginRestarts = new Counter({ name: 'svc_connector_plugin_restarts_total', help: 'plugin host processes respawned', labelNames: ['connector_key', 'connector_type'] as const, registers: [this.registry] });
  /** Filled at each scrape from `sample`: the state now, not the last value pushed. */
  readonly status = new Gauge({
    name: 'svc_connector_status',
    help: 'connector status: 1 for the status it is in, 0 for the others',
    labelNames: ['connector_key', 'connector_type', 'status'] as const,
    registers: [this.registry],
    collect: () => this.#collect(),
  });
  readonly committedOffset = new Gauge({ name: 'svc_connector_committed_offset', help: "a sink's committed offset (next record to read) per partition", labelNames: ['connector_key', 'topic', 'partition'] as const, registers: [this.registry] });
  readonly endOffset = new Gauge({ name: 'svc_connector_end_offset', help: 'end offset (high watermark) of a partition a sink reads', labelNames: ['connector_key', 'topic', 'partition'] as const, registers: [this.registry] });
  readonly lagRecords = new Gauge({ name: 'svc_connector_consumer_lag', help: 'records in a partition not yet committed by the sink', labelNames: ['connector_key', 'topic', 'partition'] as const, registers: [this.registry] });
  readonly lagSeconds = new Gauge({ name: 'svc_connector_consumer_lag_seconds', help: 'age of the oldest record not yet committed by the sink (0 when caught up)', labelNames: ['connector_key', 'topic', 'partition'] as const, registers: [this.registry] });
  /** The connectors now, for the gauges above (set by the runtime). */
  sample: () => ConnectorSample[] = () => [];
  readonly stage = new Histogram({
    name: 'svc_connector_stage_duration_seconds',
    help: 'time per batch in each stage',
    labelNames: ['connector_key', 'connector_type', 'stage'] as const,
    buckets: STAGE_BUCKETS,
    registers: [this.registry],
  });

  #collect(): void {
    for (const g of [this.status, this.committedOffset, this.endOffset, this.lagRecords, this.lagSeconds]) g.reset();
    for (const c of this.sample()) {
      for (const s of STATUSES) this.status.set({ connector_key: c.key, connector_type: c.type, status: s }, c.status === s ? 1 : 0);
      for (const p of c.partitions) {
        const l = { connector_key: c.key, topic: p.topic, partition: String(p.partition) };
        this.committedOffset.set(l, Number(p.committed_offset));
        this.endOffset.set(l, Number(p.end_offset));
        this.lagRecords.set(l, p.lag_records);
        this.lagSeconds.set(l, p.lag_seconds);
      }
    }
  }

  /** Called for every batch's `total` stage (OTLP spans). */
  onBatch: ((key: string, type: 'sink' | 'source', seconds: number) => void) | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Times `fn` into the stage histogram. */
  async time<T>(key: string, type: 'sink' | 'source', stage: SinkStage | SourceStage, fn: () => Promise<T>): Promise<T> {
    const end = this.stage.startTimer({ connector_key: key, connector_type: type, stage });
    try {
      return await fn();
    } finally {
      end();
    }
  }

  observe(key: string, type: 'sink' | 'source', stage: SinkStage | SourceStage, seconds: number): void {
    this.stage.observe({ connector_key: key, connector_type: type, stage }, seconds);
    if (stage === 'total') this.onBatch?.(key, type, seconds);
  }

  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
