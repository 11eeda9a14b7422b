// Example JS sink for svc-connectors: appends each record as one JSON line
// {"topic","partition","offset","key","value"} to plugin_config.path.
//
// Types: the runtime's build ships sdk/svc-connector-plugin.d.ts beside bin/svc-connectors;
// point the import below at it for editor checks (`// @ts-check` is on).
//
// The contract (docs/connectors.md "Writing a plugin"): write() returns one status per record,
// in order; `ok` means durable once flush() resolves; `retryable` is tried again; `permanent`
// goes to the dead-letter topic or stops the sink. A record may come twice after a crash
// (at-least-once): use topic/partition/offset to drop repeats where the target allows it.
// @ts-check
'use strict';
const fs = require('node:fs');

/** @typedef {import('../../../dist/connect/sdk/svc-connector-plugin').SinkPlugin} SinkPlugin */
/** @typedef {import('../../../dist/connect/sdk/svc-connector-plugin').SinkRecord} SinkRecord */

/** @returns {SinkPlugin} */
exports.createSink = () => {
  /** @type {number | null} */
  let fd = null;
  return {
    async open(ctx, config) {
      if (typeof config.path !== 'string' || config.path === '') throw new Error('jsonl sink: plugin_config.path is required');
      fd = fs.openSync(config.path, 'a');
      ctx.log('info', `appending to ${config.path}`);
    },
    /** @param {SinkRecord[]} records */
    async write(records) {
      const text = records
        .map((r) => JSON.stringify({ topic: r.topic, partition: r.partition, offset: r.offset, key: r.key === null ? null : r.key.toString(), value: r.value.toString() }) + '\n')
        .join('');
      try {
        fs.writeSync(/** @type {number} */ (fd), text);
        return records.map(() => ({ status: /** @type {const} */ ('ok') }));
      } catch (err) {
        return records.map(() => ({ status: /** @type {const} */ ('retryable'), message: String(err) }));
      }
    },
    async flush() {
      if (fd !== null) fs.fsyncSync(fd);
    },
    async close() {
      if (fd !== null) fs.closeSync(fd);
      fd = null;
    },
  };
};
