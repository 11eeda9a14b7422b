/**
 * `libsvc_connector_stdout_sink`: prints each record. plugin_config: `format` = "value" (the
 * value as text, one line each; default) or "json" (topic, partition, offset, key, value).
 */
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord } from '../plugin-api';

export function createSink(): SinkPlugin {
  let json = false;
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>) {
      json = config.format === 'json';
    },
    async write(records: SinkRecord[]): Promise<RecordResult[]> {
      let out = '';
      for (const r of records) {
        out += json ? JSON.stringify({ topic: r.topic, partition: r.partition, offset: r.offset, key: r.key?.toString('utf8') ?? null, value: r.value.toString('utf8') }) + '\n' : r.value.toString('utf8') + '\n';
      }
      const ok = process.stdout.write(out);
      if (!ok) await new Promise((r) => process.stdout.once('drain', r));
      return records.map(() => ({ status: 'ok' }));
    },
    async flush() {},
    async close() {},
  };
}
