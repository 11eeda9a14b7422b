/**
 * `libsvc_connector_file_source`: reads a JSON-lines file (one record per line, the line's
 * bytes without the newline as the value, unchanged) and follows it as it grows. A line is
 * only read once its newline is there. Checkpoint: the byte offset after the last acknowledged
 * line. plugin_config: `path` (required), `skip_empty` (default true), `max_line_bytes`
 * (default 1 MiB; a longer line is an error).
 */
import * as fs from 'node:fs';
import type { PluginContext, SourceBatch, SourcePlugin } from '../plugin-api';

const READ_CHUNK = 1024 * 1024; // bytes per read

export function createSource(): SourcePlugin {
  let file = '';
  let acked = 0; // offset of the last acknowledged checkpoint
  let pending: number | null = null; // offset after the batch in flight
  let skipEmpty = true;
  let maxLine = 1024 * 1024;
  let fd = -1;
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>, state: Buffer | null) {
      if (typeof config.path !== 'string' || config.path === '') throw new Error('file source: plugin_config.path is required');
      file = config.path;
      skipEmpty = config.skip_empty !== false;
      if (typeof config.max_line_bytes === 'number') maxLine = config.max_line_bytes;
      acked = state === null ? 0 : Number((JSON.parse(state.toString('utf8')) as { offset: number }).offset);
      fd = fs.openSync(file, 'r');
    },
    async poll(max: number, timeoutMs: number): Promise<SourceBatch | null> {
      const from = pending ?? acked;
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(maxLine + 1, 64 * 1024)));
      const n = fs.readSync(fd, buf, 0, buf.length, from);
      const records = [];
      let at = 0;
      while (records.length < max) {
        const nl = buf.indexOf(10, at);
        if (nl < 0 || nl >= n) break;
        if (!(skipEmpty && nl === at)) records.push({ key: null, value: Buffer.from(buf.subarray(at, nl)) });
        at = nl + 1;
      }
      if (at === 0 && n >= buf.length) throw new Error(`file source: a line at byte ${from} of ${file} is longer than ${maxLine} bytes`);
      if (at === 0) {
        await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 100)));
        return null;
      }
      pending = from + at;
      return { records, state: Buffer.from(JSON.stringify({ offset: pending })) };
    },
    async commit(ack: boolean) {
      if (ack && pending !== null) acked = pending;
      pending = null;
    },
    async close() {
      if (fd >= 0) fs.closeSync(fd);
      fd = -1;
    },
  };
}
