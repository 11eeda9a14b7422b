'use strict';
// Record bodies used by every workload: printable ASCII (so the same bytes are a
// valid JSON string with no escaping, and valid UTF-8 for Svc's JSON read format),
// `size` bytes long, starting with the zero-padded record index so records differ.

const FILLER = Buffer.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.repeat(64));

/** A `size`-byte printable body for record number `i`. */
function recordBody(i, size) {
  const buf = Buffer.allocUnsafe(size);
  const head = String(i).padStart(10, '0');
  const n = Math.min(head.length, size);
  buf.write(head.slice(0, n), 0, 'latin1');
  let pos = n;
  while (pos < size) {
    pos += FILLER.copy(buf, pos, 0, Math.min(FILLER.length, size - pos));
  }
  return buf;
}

/** Svc JSON batch (application/vnd.svc.batch+json) of `count` records from index `first`. */
function svcJsonBatch(first, count, size) {
  const records = [];
  for (let i = 0; i < count; i++) records.push({ body: recordBody(first + i, size).toString('latin1') });
  return Buffer.from(JSON.stringify({ records }));
}

/** Durable Streams JSON-stream append: a JSON array, each element one message. */
function dsJsonArray(first, count, size) {
  const items = [];
  for (let i = 0; i < count; i++) items.push(recordBody(first + i, size).toString('latin1'));
  return Buffer.from(JSON.stringify(items));
}

module.exports = { recordBody, svcJsonBatch, dsJsonArray };
