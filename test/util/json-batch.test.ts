import { parseJsonBatch } from '../../src/util/json-batch';
import { type RecordInput, decodeRecords, encodeRecordBatch } from '../../src/util/record-batch';

const limits = { maxRecords: 5, maxRecordBytes: 10 };

function parse(doc: unknown, l = limits): ReturnType<typeof parseJsonBatch> {
  return parseJsonBatch(Buffer.from(typeof doc === 'string' ? doc : JSON.stringify(doc)), l);
}

function ok(doc: unknown): RecordInput[] {
  const r = parse(doc);
  if ('error' in r) throw new Error(`unexpected ${r.error}: ${r.message}`);
  return r.records;
}

function hex(b: Uint8Array | null): string | null {
  return b === null ? null : Buffer.from(b).toString('hex');
}

function plain(records: RecordInput[]): unknown[] {
  return records.map((r) => ({ key: hex(r.key), value: hex(r.value), headers: r.headers?.map(([k, v]) => [hex(k), hex(v)]) ?? null }));
}

const h = (s: string): string => Buffer.from(s).toString('hex');

describe('parseJsonBatch accepts', () => {
  test('a record with only a body', () => {
    expect(plain(ok({ records: [{ body: 'hi' }] }))).toEqual([{ key: null, value: h('hi'), headers: null }]);
  });

  test('keys, headers (including a null header value) and non-ASCII text as UTF-8', () => {
    const records = ok({ records: [{ body: 'é', key: 'k', headers: { a: '1', 'content-type': 'x', n: null } }, { body: '' }] });
    expect(plain(records)).toEqual([
      { key: h('k'), value: h('é'), headers: [[h('a'), h('1')], [h('content-type'), h('x')], [h('n'), null]] },
      { key: null, value: '', headers: null },
    ]);
  });

  test('the base64 twins body_b64, key_b64 and headers_b64', () => {
    const records = ok({ records: [{ body_b64: '/wA=', key_b64: 'gA==', headers_b64: { 'YQ==': 'MQ==', YWJj: null } }] });
    expect(plain(records)).toEqual([{ key: '80', value: 'ff00', headers: [[h('a'), h('1')], [h('abc'), null]] }]);
  });

  test('an empty headers object as no headers', () => {
    expect(ok({ records: [{ body: 'x', headers: {} }] })[0]?.headers).toBeNull();
  });

  test('exactly maxRecords records and a value of exactly maxRecordBytes bytes', () => {
    expect(ok({ records: Array.from({ length: 5 }, () => ({ body: '0123456789' })) })).toHaveLength(5);
    expect(ok({ records: [{ body_b64: Buffer.alloc(10).toString('base64') }] })[0]?.value).toHaveLength(10);
  });

  test('records that encode into a batch and decode back unchanged', () => {
    const records = ok({ records: [{ body: 'a', key: 'k', headers: { x: 'y' } }, { body_b64: 'AAE=' }] });
    const decoded = decodeRecords(encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records }));
    expect(decoded.map((r) => [r.key?.toString() ?? null, hex(r.value), r.headers.map(([k, v]) => `${k}=${v}`)])).toEqual([
      ['k', h('a'), ['x=y']],
      [null, '0001', []],
    ]);
  });
});

describe('parseJsonBatch rejects', () => {
  function rejects(doc: unknown, error: string, status: number, message?: RegExp, l = limits): void {
    const r = parse(doc, l);
    expect('error' in r && { error: r.error, status: r.status }).toEqual({ error, status });
    if (message && 'error' in r) expect(r.message).toMatch(message);
  }

  test('bodies that are not JSON or not UTF-8 with invalid_json', () => {
    rejects('{"records": [', 'invalid_json', 400);
    rejects('', 'invalid_json', 400);
    const r = parseJsonBatch(Buffer.from([0x7b, 0xff, 0x7d]), limits);
    expect('error' in r && r.error).toBe('invalid_json');
  });

  test('a document that is not an object with a records array', () => {
    rejects([], 'invalid_batch', 400);
    rejects('null', 'invalid_batch', 400);
    rejects({}, 'invalid_batch', 400, /^records: must be an array/);
    rejects({ records: {} }, 'invalid_batch', 400, /^records: must be an array/);
    rejects({ records: [{ body: 'x' }], extra: 1 }, 'invalid_batch', 400, /^extra: unknown field/);
  });

  test('zero records with empty_batch', () => {
    rejects({ records: [] }, 'empty_batch', 400);
  });

  test('more than maxRecords records with batch_too_large (413)', () => {
    rejects({ records: Array.from({ length: 6 }, () => ({ body: 'x' })) }, 'batch_too_large', 413);
  });

  test('a value over maxRecordBytes with record_too_large (413), counting UTF-8 bytes and decoded base64', () => {
    rejects({ records: [{ body: 'x' }, { body: '01234567890' }] }, 'record_too_large', 413, /^records\[1\]\.body/);
    rejects({ records: [{ body: 'ééééé1' }] }, 'record_too_large', 413);
    rejects({ records: [{ body_b64: Buffer.alloc(11).toString('base64') }] }, 'record_too_large', 413, /body_b64/);
  });

  test('a record that is not an object, naming its index', () => {
    rejects({ records: [{ body: 'x' }, 'y'] }, 'invalid_batch', 400, /^records\[1\]: must be an object/);
    rejects({ records: [null] }, 'invalid_batch', 400, /^records\[0\]: must be an object/);
  });

  test('unknown fields, so a typo does not drop data', () => {
    rejects({ records: [{ body: 'x', heders: { a: 'b' } }] }, 'invalid_batch', 400, /^records\[0\]\.heders: unknown field/);
    rejects({ records: [{ bdy: 'x' }] }, 'invalid_batch', 400, /unknown field/);
  });

  test('a missing body and conflicting twins', () => {
    rejects({ records: [{ key: 'k' }] }, 'invalid_batch', 400, /^records\[0\]\.body: required/);
    rejects({ records: [{ body: 'x', body_b64: 'eA==' }] }, 'invalid_batch', 400, /body and body_b64/);
    rejects({ records: [{ body: 'x', key: 'k', key_b64: 'aw==' }] }, 'invalid_batch', 400, /key and key_b64/);
    rejects({ records: [{ body: 'x', headers: {}, headers_b64: {} }] }, 'invalid_batch', 400, /headers and headers_b64/);
  });

  test('fields of the wrong type, naming record and field', () => {
    rejects({ records: [{ body: 1 }] }, 'invalid_batch', 400, /^records\[0\]\.body: must be a string/);
    rejects({ records: [{ body_b64: null }] }, 'invalid_batch', 400, /^records\[0\]\.body_b64: must be a string/);
    rejects({ records: [{ body: 'x', header_list: [['a']] }] }, 'invalid_batch', 400, /^records\[0\]\.header_list\[0\]: must be a \[name, value\] pair/);
    rejects({ records: [{ body: 'x', header_list: { a: 'b' } }] }, 'invalid_batch', 400, /^records\[0\]\.header_list: must be an array/);
    rejects({ records: [{ body: 'x', header_list: [['a', 1]] }] }, 'invalid_batch', 400, /^records\[0\]\.header_list\[0\]\[1\]: must be a string/);
    rejects({ records: [{ body: 'x', headers: {}, header_list: [] }] }, 'invalid_batch', 400, /mutually exclusive/);
    rejects({ records: [{ body: 'x', key: 5 }] }, 'invalid_batch', 400, /^records\[0\]\.key: must be a string/);
    rejects({ records: [{ body: 'x', headers: [] }] }, 'invalid_batch', 400, /^records\[0\]\.headers: must be an object/);
    const four = [{ body: 'a' }, { body: 'b' }, { body: 'c' }, { body: 'd', headers: { x: 1 } }];
    rejects({ records: four }, 'invalid_batch', 400, /^records\[3\]\.headers\.x: must be a string$/);
    rejects({ records: [{ body: 'x', headers: { 'a b': true } }] }, 'invalid_batch', 400, /^records\[0\]\.headers\["a b"\]: must be a string/);
  });

  test('base64 with invalid characters, a bad length, misplaced padding or the URL-safe alphabet', () => {
    for (const bad of ['eA=', 'e A=', 'eA==eA==', '=eA=', 'eA===', '-_8=', 'eA\n==', 'ééé=']) {
      rejects({ records: [{ body_b64: bad }] }, 'invalid_batch', 400, /^records\[0\]\.body_b64: must be standard padded base64/);
    }
    rejects({ records: [{ body: 'x', key_b64: 'a' }] }, 'invalid_batch', 400, /key_b64/);
    rejects({ records: [{ body: 'x', headers_b64: { 'YQ==': '!!!!' } }] }, 'invalid_batch', 400, /headers_b64/);
    rejects({ records: [{ body: 'x', headers_b64: { a: 'YQ==' } }] }, 'invalid_batch', 400, /headers_b64: name "a"/);
  });

  test('text with a lone surrogate, which has no UTF-8 encoding', () => {
    rejects('{"records":[{"body":"\\ud800"}]}', 'invalid_batch', 400, /lone surrogate/);
    rejects('{"records":[{"body":"x","headers":{"\\udc00":"v"}}]}', 'invalid_batch', 400, /lone surrogate/);
  });
});

describe('parseJsonBatch takes a JSON read page back', () => {
  const limits2 = { maxRecords: 100, maxRecordBytes: 1024 };
  test('"body": null is a null value (tombstone); seq and timestamp are accepted and ignored; header_list keeps order, repeats and null values', () => {
    const page = [
      { seq: 7, timestamp: 1_700_000_000_000, key: 'k', body: null },
      { seq: 8, timestamp: 1_700_000_000_001, header_list: [['d', '1'], ['d', '2'], ['n', null]], body: 'x' },
      { seq: 9, timestamp: 1_700_000_000_002, header_list_b64: [['ZA==', 'gA==']], body_b64: 'gA==' },
    ];
    const r = parseJsonBatch(Buffer.from(JSON.stringify({ records: page })), limits2);
    if ('error' in r) throw new Error(r.message);
    expect(r.records[0]).toEqual({ key: Buffer.from('k'), value: null, headers: null });
    expect(r.records[1]!.headers!.map(([k, v]) => [Buffer.from(k).toString(), v === null ? null : Buffer.from(v).toString()])).toEqual([['d', '1'], ['d', '2'], ['n', null]]);
    expect(r.records[2]!.headers).toEqual([[Buffer.from('d'), Buffer.from([0x80])]]);
    expect(r.records[2]!.value).toEqual(Buffer.from([0x80]));
  });
});
