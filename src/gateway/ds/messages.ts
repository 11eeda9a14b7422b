/**
 * A Durable Streams request body → records. In JSON mode (`application/json`) a top-level array is
 * flattened one level, each element one message and one record (PROTOCOL.md "JSON mode"); any other
 * body is bytes, stored as records of at most `maxRecordBytes` each.
 *
 * Used for a create's initial body; an append's JSON body is split on the shard's worker instead
 * (ds-write.ts), with the same splitter and refusals, so both store a message alike: the client's
 * bytes without whitespace between tokens (docs/durable-streams.md).
 *
 * No count limit: the official client batches as many messages as it holds into one append (the
 * reference server takes them), so the only bound is the request body limit (`--max-request-bytes`),
 * which the engine enforces before this runs. A byte stream has no message boundaries a reader could
 * see (reads return the bytes concatenated), so a body over `--max-record-bytes` is cut into several
 * records of one batch: still one append, atomic and, with producer headers, exactly once.
 */
import { SvcError } from '../../errors';
import { mediaType, splitJsonMessages } from '../../shards';
import { type RecordInput } from '../../shards';

export function isJson(contentType: string): boolean {
  return mediaType(contentType) === 'application/json';
}

/** `emptyArrayOk`: a create may start a JSON stream empty with `[]`; an append of `[]` is refused. */
export function toRecords(body: Buffer, contentType: string, emptyArrayOk: boolean, limits: { maxRecordBytes: number }): RecordInput[] {
  if (body.length === 0) return [];
  if (!isJson(contentType)) return byteRecords(body, limits.maxRecordBytes);
  const split = splitJsonMessages(body);
  if ('error' in split) throw new SvcError('invalid_json', split.error);
  if (split.messages.length === 0 && !emptyArrayOk) throw new SvcError('empty_batch', 'an append of [] carries no message');
  return split.messages.map((value) => {
    // A JSON message is one record: it cannot be cut, so its size limit stays.
    if (value.length > limits.maxRecordBytes) throw new SvcError('record_too_large', `a message is limited to ${limits.maxRecordBytes} bytes`);
    return { key: null, value, headers: null };
  });
}

/** A byte body as records of at most `maxRecordBytes` (views of the body, not copies). */
function byteRecords(body: Buffer, maxRecordBytes: number): RecordInput[] {
  const records: RecordInput[] = [];
  for (let at = 0; at < body.length; at += maxRecordBytes) {
    records.push({ key: null, value: body.subarray(at, Math.min(body.length, at + maxRecordBytes)), headers: null });
  }
  return records;
}
