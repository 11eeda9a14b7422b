/**
 * Prometheus metrics of svc-connectors (spec "Metrics", plus retries, dead-lettered records and
 * plugin restarts). The only file under src/connect that imports prom-client; each runtime has
 * its own registry, so tests can run several in one process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
  readonly stage = new Histogram({
    name: 'svc_connector_stage_duration_seconds',
    help: 'time per batch in each stage',
    labelNames: ['connector_key', 'connector_type', 'stage'] as const,
    buckets: STAGE_BUCKETS,
    registers: [this.registry],
  });

  /** Called for every batch's `total` stage (OTLP spans). */
  onBatch: ((key: string, type: 'sink' | 'source', seconds: number) => void) | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
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
