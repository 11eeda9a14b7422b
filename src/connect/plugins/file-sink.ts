/**
 * `libsvc_connector_file_sink`: appends each record's value and a newline to a file, so a file
 * source → node → file sink round trip is byte-identical. flush() is fdatasync: records are
 * reported durable only once they are on disk.
 * plugin_config: `path` (required), `format` = "raw" (default: value + "\n") or "json" (one
 * JSON object per line with topic, partition, offset, key, value).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord } from '../plugin-api';

export function createSink(): SinkPlugin {
  let fd = -1;
  let json = false;
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>) {
      if (typeof config.path !== 'string' || config.path === '') throw new Error('file sink: plugin_config.path is required');
      json = config.format === 'json';
      fs.mkdirSync(path.dirname(config.path), { recursive: true });
      fd = fs.openSync(config.path, 'a', 0o644);
    },
    async write(records: SinkRecord[]): Promise<RecordResult[]> {
      const parts: Buffer[] = [];
      const nl = Buffer.from('\n');
      for (const r of records) {
        if (json) parts.push(Buffer.from(JSON.stringify({ topic: r.topic, partition: r.partition, offset: r.offset, key: r.key?.toString('utf8') ?? null, value: r.value.toString('utf8') }) + '\n'));
        else parts.push(r.value, nl);
      }
      try {
        const buf = Buffer.concat(parts);
        for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off);
        return records.map(() => ({ status: 'ok' }));
      } catch (err) {
        // A short or failed write leaves the batch's tail undefined: retry the whole batch.
        return records.map(() => ({ status: 'retryable', message: (err as Error).message }));
      }
    },
    async flush() {
      fs.fdatasyncSync(fd);
    },
    async close() {
      if (fd >= 0) fs.closeSync(fd);
      fd = -1;
    },
  };
}
