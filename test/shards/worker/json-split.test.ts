import { checkDsJson } from '../../../src/shards/worker/append-checks';
import { splitJsonMessages } from '../../../src/shards/worker/json-split';
import { type SvcError } from '../../../src/errors';

function split(text: string | Buffer): string[] {
  const r = splitJsonMessages(Buffer.isBuffer(text) ? text : Buffer.from(text));
  if ('error' in r) throw new Error(`refused: ${text.toString()}`);
  return r.messages.map((m) => m.toString());
}

function refused(text: string | Buffer): boolean {
  return 'error' in splitJsonMessages(Buffer.isBuffer(text) ? text : Buffer.from(text));
}

describe('splitJsonMessages', () => {
  test('a top-level array is split into its elements; any other value is one message', () => {
    expect(split('[1,"a",true,null,{"b":2},[3]]')).toEqual(['1', '"a"', 'true', 'null', '{"b":2}', '[3]']);
    expect(split('{"a":1}')).toEqual(['{"a":1}']);
    expect(split('"x"')).toEqual(['"x"']);
    expect(split('-0.5e+10')).toEqual(['-0.5e+10']);
    expect(split('[]')).toEqual([]);
    expect(splitJsonMessages(Buffer.from('[]'))).toEqual({ messages: [], array: true });
    expect(splitJsonMessages(Buffer.from('{}'))).toEqual({ messages: [Buffer.from('{}')], array: false });
  });

  test('strings holding ] , " { } [ : and escapes do not end an element', () => {
    expect(split('["a]b","c,d","e\\"f]","g\\\\","h\\\\\\"]",{"k]":"v,}"}]')).toEqual(['"a]b"', '"c,d"', '"e\\"f]"', '"g\\\\"', '"h\\\\\\"]"', '{"k]":"v,}"}']);
    expect(split('["\\u005d\\/\\b\\f\\n\\r\\t"]')).toEqual(['"\\u005d\\/\\b\\f\\n\\r\\t"']);
    expect(split('["ünï €😀"]')).toEqual(['"ünï €😀"']);
  });

  test('nested objects and arrays are one element each, only the top level is flattened', () => {
    expect(split('[[1,[2,[3]]],{"a":{"b":[{"c":[]}]}},[],{}]')).toEqual(['[1,[2,[3]]]', '{"a":{"b":[{"c":[]}]}}', '[]', '{}']);
    expect(split('[[]]')).toEqual(['[]']);
  });

  test('whitespace between tokens is dropped, inside strings kept; a compact element is a view of the body', () => {
    expect(split(' \n[ {"a" : 1} ]\r\n\t')).toEqual(['{"a":1}']);
    expect(split('[ 1 , [ 2 , { "x y" : " a , b " } ] ,\n"s p" ]')).toEqual(['1', '[2,{"x y":" a , b "}]', '"s p"']);
    expect(split('{\n  "a": [1, 2],\n  "b": "c \\" d"\n}')).toEqual(['{"a":[1,2],"b":"c \\" d"}']);
    const body = Buffer.from('[{"a":1}, {"b" :2}]');
    const r = splitJsonMessages(body);
    if ('error' in r) throw new Error('refused');
    expect(r.messages[0]!.buffer).toBe(body.buffer);
    expect(r.messages[0]!.byteOffset).toBe(body.byteOffset + 1);
    expect(r.messages[1]!.toString()).toBe('{"b":2}');
  });

  test('numbers and escapes are kept as sent (the same JSON value)', () => {
    expect(split('[1.0,1e2,12345678901234567890123,"\\u0041"]')).toEqual(['1.0', '1e2', '12345678901234567890123', '"\\u0041"']);
  });

  test.each([
    '',
    ' ',
    '[',
    ']',
    '[1,]',
    '[,1]',
    '[1 2]',
    '{"a":1,}',
    '{"a" 1}',
    '{a:1}',
    '{"a":1',
    '[1]]',
    '[1] x',
    '1 2',
    '"abc',
    '"a\\x"',
    '"\\u12g4"',
    '"\\u12"',
    '"a\nb"',
    "'a'",
    '01',
    '1.',
    '.5',
    '-',
    '1e',
    '+1',
    'tru',
    'nul',
    'True',
    'NaN',
    '[Infinity]',
    '\uFEFF[1]',
    '[1,{"a":[2,}]]',
    '{"a":1]',
    '[1}',
  ])('refuses %j, as JSON.parse does', (text) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(refused(text)).toBe(true);
  });

  test('refuses bytes that are not UTF-8', () => {
    expect(refused(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]))).toBe(true);
    expect(refused(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toBe(true); // an encoded surrogate
  });

  test('deep nesting is no stack overflow', () => {
    const depth = 200_000;
    expect(split('['.repeat(depth) + ']'.repeat(depth))).toEqual(['['.repeat(depth - 1) + ']'.repeat(depth - 1)]);
    expect(refused('['.repeat(depth) + ']'.repeat(depth - 1))).toBe(true);
  });

  test('agrees with JSON.parse on random values and on random damage to them', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const atoms = ['0', '-1.5e-3', '"a]b,c\\"d"', 'true', 'false', 'null', '"\\u00e9\\n"', '"ü"', '123456'];
    const value = (d: number): string => {
      const k = rand(d > 3 ? 1 : 4);
      if (k === 0) return atoms[rand(atoms.length)]!;
      const ws = (): string => [' ', '', '\n', '\t ', ''][rand(5)]!;
      const n = rand(4);
      if (k === 1 || k === 2) return `[${ws()}${Array.from({ length: n }, () => value(d + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
      return `{${ws()}${Array.from({ length: n }, (_, i) => `"k${i}"${ws()}:${ws()}${value(d + 1)}`).join(`,${ws()}`)}${ws()}}`;
    };
    const chars = ['[', ']', '{', '}', ',', ':', '"', '\\', ' ', '1', 'x', '-', '.', 'e'];
    for (let t = 0; t < 3000; t++) {
      const text = value(0);
      const parsed: unknown = JSON.parse(text);
      const r = splitJsonMessages(Buffer.from(text));
      if ('error' in r) throw new Error(`refused valid ${text}`);
      const expected = Array.isArray(parsed) ? parsed : [parsed];
      expect(r.messages.map((m) => JSON.parse(m.toString()) as unknown)).toEqual(expected);
      // Compacted: no whitespace outside strings.
      for (const m of r.messages) expect(m.toString().replace(/"(?:[^"\\]|\\.)*"/g, '""')).not.toMatch(/[ \n\t\r]/);
      // Damage: replace, insert or delete one byte; the splitter must refuse exactly when JSON.parse does.
      const at = rand(text.length + 1);
      const c = chars[rand(chars.length)]!;
      const op = rand(3);
      const bad = op === 0 ? text.slice(0, at) + c + text.slice(at + 1) : op === 1 ? text.slice(0, at) + c + text.slice(at) : text.slice(0, at) + text.slice(at + 1);
      let parses = true;
      try {
        JSON.parse(bad);
      } catch {
        parses = false;
      }
      expect([bad, refused(bad)]).toEqual([bad, !parses]);
    }
  });
});

describe('checkDsJson', () => {
  const limits = { maxRecordBytes: 10, maxBatchRecords: 1 };

  function error(body: string): SvcError {
    try {
      checkDsJson(Buffer.from(body), limits);
    } catch (err) {
      return err as SvcError;
    }
    throw new Error('accepted');
  }

  test('messages as records, no count limit (maxBatchRecords is for Svc batches)', () => {
    expect(checkDsJson(Buffer.from('[1,2,3]'), limits).map((r) => [r.key, r.value?.toString(), r.headers])).toEqual([
      [null, '1', null],
      [null, '2', null],
      [null, '3', null],
    ]);
  });

  test('the refusals the listener gave: invalid JSON, an append of [], a message over the limit', () => {
    expect([error('[1,').code, error('[1,').message]).toEqual(['invalid_json', 'the body is not valid JSON']);
    expect([error('[]').code, error('[]').message]).toEqual(['empty_batch', 'an append of [] carries no message']);
    expect([error('["0123456789"]').code, error('["0123456789"]').message]).toEqual(['record_too_large', 'a message is limited to 10 bytes']);
    // The limit applies to the stored (compacted) bytes: 10 bytes after whitespace is dropped fits.
    expect(checkDsJson(Buffer.from('[ [1, 2, 3, 4] ]'), limits).map((r) => r.value?.toString())).toEqual(['[1,2,3,4]']);
  });
});
