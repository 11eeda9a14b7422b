/**
 * Records framed as server-sent events for `GET /{stream}?live=sse` (docs/protocol.md, "Live
 * reads"): one event per record,
 *
 *   event: record
 *   id: <seq>
 *   data: <the record in the JSON read format>
 *   <blank line>
 *
 * Rendered on the shard worker, once per page, and shared by every SSE reader at that position:
 * the gateway thread only copies the bytes to sockets. The JSON read format escapes every C0
 * control character, so `data` is always a single line (SSE lines end at CR or LF only).
 */
import type { DecodedRecord } from '../../util/record-batch';
import { Out, writeRecord } from './json-records';

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const EVENT_ID = ascii('event: record\nid: ');
const DATA = ascii('\ndata: ');
const END = ascii('\n\n');

export function renderSse(records: readonly DecodedRecord[]): Buffer {
  if (records.length === 0) return Buffer.alloc(0);
  // Room for the unescaped bytes plus ~64 bytes of JSON and ~48 of SSE framing per record.
  let estimate = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as DecodedRecord;
    estimate += 112 + (r.value?.length ?? 0) + (r.key?.length ?? 0);
  }
  const out = new Out(estimate);
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as DecodedRecord;
    out.raw(EVENT_ID);
    out.int(r.offset);
    out.raw(DATA);
    writeRecord(out, r);
    out.raw(END);
  }
  return out.buf.subarray(0, out.pos);
}
