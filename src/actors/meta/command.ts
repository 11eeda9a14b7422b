/**
 * One command of the metadata log: `{index, op, key, value?}` as the JSON body of a frame.
 * `index` numbers the commands 1, 2, 3, … with no gaps; a record's version is the index of the
 * command that last wrote it.
 */
import { encodeFrame } from './frame';

export type MetaCommand =
  | { index: number; op: 'put'; key: string; value: unknown }
  | { index: number; op: 'delete'; key: string };

/**
 * The frame of a put. `valueJson` is the value already serialised (the caller needs it to check
 * the value is JSON), so it is spliced in rather than serialised twice.
 */
export function encodePut(index: number, key: string, valueJson: string): Buffer {
  return encodeFrame(`{"index":${index},"op":"put","key":${JSON.stringify(key)},"value":${valueJson}}`);
}

export function encodeDelete(index: number, key: string): Buffer {
  return encodeFrame(`{"index":${index},"op":"delete","key":${JSON.stringify(key)}}`);
}

/**
 * The command in a frame body whose CRC matched. A body that does not hold a command was written
 * that way (not torn), so this throws rather than guessing: `where` names the file for the message.
 */
export function decodeCommand(body: Buffer, where: string): MetaCommand {
  let c: unknown;
  try {
    c = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new Error(`${where}: a frame with a valid CRC holds invalid JSON (${(e as Error).message})`, { cause: e });
  }
  const o = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
  const index = o.index;
  const key = o.key;
  if (!Number.isSafeInteger(index) || (index as number) < 1 || typeof key !== 'string') {
    throw new Error(`${where}: a frame with a valid CRC holds no command: ${body.toString('utf8').slice(0, 200)}`);
  }
  if (o.op === 'put' && 'value' in o) return { index: index as number, op: 'put', key, value: o.value };
  if (o.op === 'delete') return { index: index as number, op: 'delete', key };
  throw new Error(`${where}: command ${index as number} has an unknown op or no value: ${body.toString('utf8').slice(0, 200)}`);
}
