/**
 * JS plugin modules in their own worker thread (isolation = "process", the default for a JS
 * module given by path): the SinkPlugin / SourcePlugin the runners see is a proxy whose calls
 * go to the worker. A plugin that throws out of its calls, loops forever or outgrows its heap
 * limit costs only its connector (error, respawn with backoff), never the runtime.
 */
import type { RecordResult, SinkPlugin, SinkRecord, SourceBatch, SourcePlugin } from '../plugin-api';
import { asBuffer } from './protocol';
import { WorkerClient, type WorkerLimits } from './worker-client';

export { importPluginModule } from './load-module';
export type { WorkerLimits };

export function createWorkerSink(file: string, key: string, timeoutMs: number, limits: WorkerLimits): SinkPlugin {
  let context: Parameters<SinkPlugin['open']>[0] | null = null;
  const w = new WorkerClient({ file, type: 'sink', key, timeoutMs }, limits, () => context);
  return {
    ready: () => w.ready(),
    async open(ctx, config) {
      context = ctx;
      await w.call({ op: 'open', config, state: null }, timeoutMs);
    },
    write(records: SinkRecord[]): Promise<RecordResult[]> {
      return w.call({ op: 'write', records }, timeoutMs);
    },
    async flush() {
      await w.call({ op: 'flush' }, timeoutMs);
    },
    async close() {
      try {
        await w.call({ op: 'close' }, timeoutMs);
      } finally {
        w.end();
      }
    },
  };
}

export function createWorkerSource(file: string, key: string, timeoutMs: number, limits: WorkerLimits): SourcePlugin {
  let context: Parameters<SourcePlugin['open']>[0] | null = null;
  const w = new WorkerClient({ file, type: 'source', key, timeoutMs }, limits, () => context);
  return {
    ready: () => w.ready(),
    async open(ctx, config, state) {
      context = ctx;
      await w.call({ op: 'open', config, state }, timeoutMs);
    },
    async poll(max: number, pollMs: number): Promise<SourceBatch | null> {
      const b = await w.call({ op: 'poll', max, timeoutMs: pollMs }, timeoutMs + pollMs);
      if (b === null) return null;
      return { state: asBuffer(b.state), records: b.records.map((r) => ({ ...r, key: r.key === null ? null : asBuffer(r.key), value: asBuffer(r.value) })) };
    },
    async commit(ack: boolean) {
      await w.call({ op: 'commit', ack }, timeoutMs);
    },
    async close() {
      try {
        await w.call({ op: 'close' }, timeoutMs);
      } finally {
        w.end();
      }
    },
  };
}
