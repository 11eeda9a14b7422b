/**
 * Record headers reach native plugins: the host appends the optional headers trailer to a sink
 * batch, and the SDK's reader (compiled with gcc, as a plugin would be) hands each record its
 * headers; the records' own layout is unchanged, so a reader that ignores the trailer still works.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { encodeSinkBatch } from '../../src/connect/native/batch-codec';
import { ROOT, tempDir } from '../helpers/node-process';

const rec = (offset: number, value: string, headers: Record<string, string>) => ({ topic: 't', partition: 0, offset: String(offset), key: null, value: Buffer.from(value), timestamp: 1, headers });

describe('record headers for native plugins', () => {
  const exe = path.join(tempDir('svc-connect-hdr-'), 'read_headers');
  beforeAll(() => {
    execFileSync('gcc', ['-Wall', '-Wextra', '-Werror', '-I', path.join(ROOT, 'src', 'connect', 'sdk'), '-o', exe, path.join(ROOT, 'test', 'connect', 'fixtures', 'read_headers.c')]);
  });
  const read = (b: Buffer): string => execFileSync(exe, { input: b }).toString();

  test('each record gets its own headers through svc_batch_next and svc_header_next', () => {
    const records = [rec(7, 'a', { 'trace-id': 'abc', kind: 'order' }), rec(8, 'b', {}), rec(9, 'c', { 'ü': 'ñ' })];
    expect(read(encodeSinkBatch(records))).toBe('7 a trace-id=abc kind=order\n8 b\n9 c ü=ñ\n');
  });

  test('the record section is byte-identical with or without headers (the trailer only follows it)', () => {
    const withH = encodeSinkBatch([rec(1, 'x', { h: 'v' })]);
    const without = encodeSinkBatch([rec(1, 'x', {})]);
    expect(withH.subarray(0, without.length).equals(without)).toBe(true);
    expect(withH.readUInt32LE(without.length)).toBe(0x48435653);
    expect(read(without)).toBe('1 x\n');
  });

  test('a truncated headers trailer is reported as malformed, not read past the end', () => {
    const b = encodeSinkBatch([rec(1, 'x', { name: 'value' })]);
    expect(() => execFileSync(exe, { input: b.subarray(0, b.length - 3), stdio: ['pipe', 'pipe', 'ignore'] })).toThrow();
  });
});
