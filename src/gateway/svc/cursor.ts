/**
 * Svc-Cursor: an opaque resume token for paginated catch-up reads. It carries the next seq
 * and the stream's id, so a cursor outlives nothing it should not: a stream deleted and
 * created again under the same name has a new id, and its old cursors are refused.
 */
import { SvcError } from '../../errors';

export function encodeCursor(streamId: number, seq: number): string {
  return Buffer.from(`${streamId.toString(36)}.${seq.toString(36)}`).toString('base64url');
}

export function decodeCursor(c: string): { streamId: number; seq: number } {
  const m = /^([0-9a-z]{1,12})\.([0-9a-z]{1,12})$/.exec(Buffer.from(c, 'base64url').toString());
  if (m === null) throw new SvcError('invalid_parameter', 'cursor is not one this server issued');
  return { streamId: parseInt(m[1]!, 36), seq: parseInt(m[2]!, 36) };
}
