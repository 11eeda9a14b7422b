/**
 * The byte-level parts of the client, fed input cut at every possible place: the stdin record
 * splitter (lines, NUL, length prefixes) and the SSE parser. A cut must never change what comes out.
 */
import { RecordSplitter, type Framing } from '../../../src/cli/client/record-splitter';
import { SseParser } from '../../../src/cli/client/sse';

function splitAll(framing: Framing, input: Buffer, cut: number): string[] {
  const s = new RecordSplitter(framing);
  const out = [...s.push(input.subarray(0, cut)), ...s.push(input.subarray(cut))];
  const last = s.end();
  if (last !== null) out.push(last);
  return out.map((b) => b.toString('latin1'));
}

describe('RecordSplitter', () => {
  test('splits lines (dropping a CR before LF, keeping a last line without newline) at every cut', () => {
    const input = Buffer.from('a\r\nbb\n\nccc\r\nlast');
    for (let cut = 0; cut <= input.length; cut++) expect(splitAll('line', input, cut)).toEqual(['a', 'bb', '', 'ccc', 'last']);
  });

  test('splits NUL-separated records, newlines inside them kept', () => {
    const input = Buffer.from('x\ny\0\0z\0');
    for (let cut = 0; cut <= input.length; cut++) expect(splitAll('nul', input, cut)).toEqual(['x\ny', '', 'z']);
  });

  test('splits 4-byte big-endian length-prefixed records at every cut, and refuses a cut-off record', () => {
    const rec = (s: string) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(s.length);
      return Buffer.concat([len, Buffer.from(s, 'latin1')]);
    };
    const input = Buffer.concat([rec('hello'), rec(''), rec('\0\n\xff')]);
    for (let cut = 0; cut <= input.length; cut++) expect(splitAll('length', input, cut)).toEqual(['hello', '', '\0\n\xff']);
    const s = new RecordSplitter('length');
    s.push(input.subarray(0, 7));
    expect(() => s.end()).toThrow(/inside a length-prefixed record/);
  });
});

describe('SseParser', () => {
  const text = ': keep-alive\r\n\r\nevent: record\r\nid: 7\r\ndata: {"seq":7}\r\n\r\nevent: control\ndata: {"next_seq":8}\n\ndata: a\ndata: b\r\r\n';
  test('yields the same events however the bytes are cut (CRLF, LF and CR line ends, comments)', () => {
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut))];
      expect(events).toEqual([
        { event: 'record', id: '7', data: '{"seq":7}' },
        { event: 'control', id: null, data: '{"next_seq":8}' },
        { event: 'message', id: null, data: 'a\nb' },
      ]);
    }
  });

  test('keeps a multi-byte UTF-8 character cut between chunks whole', () => {
    const bytes = Buffer.from('data: größe ✓\n\n');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const p = new SseParser();
      expect([...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut))]).toEqual([{ event: 'message', id: null, data: 'größe ✓' }]);
    }
  });
});
