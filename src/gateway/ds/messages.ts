/**
 * A Durable Streams request body → records: one message is one record. In JSON mode
 * (`application/json`) a top-level array is flattened one level, each element one message
 * (PROTOCOL.md "JSON mode"); any other body is one message as sent.
 */
import { SvcError } from '../../errors';
import { mediaType } from '../../shards';
import { type RecordInput } from '../../shards';

export function isJson(contentType: string): boolean {
  return mediaType(contentType) === 'application/json';
}

/** `emptyArrayOk`: a create may start a JSON stream empty with `[]`; an append of `[]` is refused. */
export function toRecords(body: Buffer, contentType: string, emptyArrayOk: boolean, limits: { maxRecordBytes: number; maxBatchRecords: number }): RecordInput[] {
  if (body.length === 0) return [];
  if (!isJson(contentType)) {
    if (body.length > limits.maxRecordBytes) throw new SvcError('record_too_large', `a message is limited to ${limits.maxRecordBytes} bytes`);
    return [{ key: null, value: body, headers: null }];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new SvcError('invalid_json', 'the body is not valid JSON');
  }
  const values = Array.isArray(parsed) ? parsed : [parsed];
  if (values.length === 0 && !emptyArrayOk) throw new SvcError('empty_batch', 'an append of [] carries no message');
  if (values.length > limits.maxBatchRecords) throw new SvcError('batch_too_large', `an append is limited to ${limits.maxBatchRecords} messages`);
  return values.map((v) => {
    const value = Buffer.from(JSON.stringify(v));
    if (value.length > limits.maxRecordBytes) throw new SvcError('record_too_large', `a message is limited to ${limits.maxRecordBytes} bytes`);
    return { key: null, value, headers: null };
  });
}
