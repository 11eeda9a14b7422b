'use strict';
// The ceiling of a Kafka produce: the raw durable write rate of the segment log alone (write +
// fdatasync per group, two groups in flight as the shard's group commit allows), fed the same
// RecordBatch v2 frames a librdkafka producer sends (batches of about `batchBytes` of records of
// `size` bytes). No network, no protocol, no shard bookkeeping.
// Usage: node perf/micro/segment-log-write.js <size> <records> [batchBytes=1000000] [dir=os.tmpdir()]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SegmentLog } = require('../../dist/shards/worker/segment-log');
const { encodeFrame } = require('../../dist/shards/worker/frame');
const { encodeRecordBatch } = require('../../dist/util/record-batch');

/** FrameType.Data (a const enum in the source: not present at run time). */
const DATA_FRAME = 1;
const IN_FLIGHT = 2;

async function main() {
  const size = Number(process.argv[2] ?? 100);
  const records = Number(process.argv[3] ?? 1_000_000);
  const batchBytes = Number(process.argv[4] ?? 1_000_000);
  const dir = fs.mkdtempSync(path.join(process.argv[5] ?? os.tmpdir(), 'svc-seglog-'));
  const value = Buffer.alloc(size, 97);
  // librdkafka counts a record's value, key and per-record overhead (about 10 bytes here) against batch.size.
  const perBatch = Math.max(1, Math.floor(batchBytes / (size + 10)));
  const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: Array.from({ length: perBatch }, () => ({ key: null, value, headers: null })) });
  const frame = encodeFrame(DATA_FRAME, 1, batch);
  const log = SegmentLog.open(path.join(dir, 'log'), 256 << 20);
  const batches = Math.ceil(records / perBatch);
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches) {
        next++;
        await log.write([frame]);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  log.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const written = batches * perBatch;
  console.log(JSON.stringify({ mode: 'segment-log', size, records: written, recordsPerBatch: perBatch, batchBytes: frame.length, seconds }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
