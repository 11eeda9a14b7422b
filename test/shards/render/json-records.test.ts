import { randomBytes } from 'node:crypto';
import { renderJson } from '../../../src/shards/render/json-records';
import { type DecodedRecord, decodeRecords, encodeRecordBatch } from '../../../src/util/record-batch';
import { isUtf8 } from '../../../src/util/utf8';

const b = (s: string): Buffer => Buffer.from(s);

function rec(over: Partial<DecodedRecord>): DecodedRecord {
  return { offset: 0, timestamp: 1000, key: null, value: b('x'), headers: [], ...over };
}

/** The format written the obvious way, with objects and JSON.stringify. */
function reference(records: DecodedRecord[]): string {
  return JSON.stringify(
    records.map((r) => {
      const o: Record<string, unknown> = { seq: r.offset, timestamp: r.timestamp };
      if (r.key !== null) o[isUtf8(r.key) ? 'key' : 'key_b64'] = r.key.toString(isUtf8(r.key) ? 'utf8' : 'base64');
      if (r.headers.length > 0) {
        const utf8 = r.headers.every(([k, v]) => isUtf8(k) && (v === null || isUtf8(v)));
        const enc = (x: Buffer): string => x.toString(utf8 ? 'utf8' : 'base64');
        const lossless = r.headers.every(([, v]) => v !== null) && new Set(r.headers.map(([k]) => k.toString('latin1'))).size === r.headers.length;
        if (lossless) {
          const h: Record<string, string> = {};
          for (const [k, v] of r.headers) h[enc(k)] = enc(v!);
          o[utf8 ? 'headers' : 'headers_b64'] = h;
        } else {
          o[utf8 ? 'header_list' : 'header_list_b64'] = r.headers.map(([k, v]) => [enc(k), v === null ? null : enc(v)]);
        }
      }
      if (r.value === null) o['body'] = null;
      else o[isUtf8(r.value) ? 'body' : 'body_b64'] = r.value.toString(isUtf8(r.value) ? 'utf8' : 'base64');
      return o;
    }),
  );
}

describe('renderJson', () => {
  test('renders seq, timestamp, key, headers and body of UTF-8 records in that order', () => {
    const out = renderJson([rec({ offset: 7, timestamp: 1_700_000_000_000, key: b('k1'), value: b('hello'), headers: [[b('content-type'), b('text/plain')]] })]);
    expect(out.toString()).toBe('[{"seq":7,"timestamp":1700000000000,"key":"k1","headers":{"content-type":"text/plain"},"body":"hello"}]');
  });

  test('renders an empty list as an empty array', () => {
    expect(renderJson([]).toString()).toBe('[]');
  });

  test('omits key for a null key and headers when there are none; a null value (tombstone) is "body": null, not an empty body', () => {
    expect(renderJson([rec({ value: null })]).toString()).toBe('[{"seq":0,"timestamp":1000,"body":null}]');
    expect(renderJson([rec({ value: b('') })]).toString()).toBe('[{"seq":0,"timestamp":1000,"body":""}]');
  });

  test('switches to body_b64 and key_b64 for bytes that are not UTF-8', () => {
    const out = JSON.parse(renderJson([rec({ key: Buffer.from([0xff, 0x00]), value: Buffer.from([0xc3, 0x28]) })]).toString());
    expect(out).toEqual([{ seq: 0, timestamp: 1000, key_b64: '/wA=', body_b64: 'wyg=' }]);
  });

  test('moves all headers to headers_b64 when any header key or value is not UTF-8', () => {
    const out = JSON.parse(renderJson([rec({ headers: [[b('a'), b('1')], [b('b'), Buffer.from([0x80])]] })]).toString());
    expect(out[0].headers_b64).toEqual({ 'YQ==': 'MQ==', 'Yg==': 'gA==' });
    expect(out[0].headers).toBeUndefined();
  });

  test('renders repeated header keys and null header values losslessly as header_list, in order', () => {
    const out = renderJson([rec({ headers: [[b('a'), b('1')], [b('n'), null], [b('a'), b('2')], [b('z'), b('3')], [b('a'), b('4')]] })]);
    expect(out.toString()).toBe('[{"seq":0,"timestamp":1000,"header_list":[["a","1"],["n",null],["a","2"],["z","3"],["a","4"]],"body":"x"}]');
    expect(renderJson([rec({ headers: [[b('d'), b('1')], [b('d'), b('2')]] })]).toString()).toBe('[{"seq":0,"timestamp":1000,"header_list":[["d","1"],["d","2"]],"body":"x"}]');
    expect(renderJson([rec({ headers: [[b('n'), null]] })]).toString()).toBe('[{"seq":0,"timestamp":1000,"header_list":[["n",null]],"body":"x"}]');
  });

  test('uses header_list_b64 when headers are neither lossless as an object nor UTF-8', () => {
    const out = JSON.parse(renderJson([rec({ headers: [[b('d'), Buffer.from([0x80])], [b('d'), null]] })]).toString());
    expect(out[0].header_list_b64).toEqual([['ZA==', 'gA=='], ['ZA==', null]]);
    expect(out[0].headers).toBeUndefined();
  });

  test('escapes quotes, backslashes and control characters and keeps other UTF-8 as is, byte for byte like JSON.stringify', () => {
    const tricky = '"quoted" \\ back\nnew\ttab\r\b\f\u0000\u001f\u007f é 中文 😀 \u2028';
    const records = [rec({ key: b(tricky), value: b(tricky), headers: [[b(tricky), b(tricky)]] })];
    expect(renderJson(records).toString()).toBe(reference(records));
  });

  test('grows its output when escaping makes a value much longer than its bytes', () => {
    const records = [rec({ value: Buffer.alloc(10_000, 0x01) }), rec({ offset: 1, value: Buffer.alloc(5000, 0x22) })];
    const out = renderJson(records).toString();
    expect(out).toBe(reference(records));
    expect(JSON.parse(out)[0].body).toBe('\u0001'.repeat(10_000));
  });

  test('renders large, zero and negative numbers exactly', () => {
    const records = [0, 9, 10, 99, 100, 999_999_999, 1e9, 1e9 + 7, 2 ** 32, 1e15, Number.MAX_SAFE_INTEGER].map((n, i) => rec({ offset: n, timestamp: i % 2 ? -n : n }));
    records.push(rec({ offset: 1, timestamp: -1_700_000_000_000 }));
    expect(renderJson(records).toString()).toBe(reference(records));
  });

  test('matches the object-and-JSON.stringify rendering on 500 random records decoded from a batch', () => {
    const texts = ['plain', 'with "quotes"', 'ünïcødé', '\u0007bell', '', '{"json":[1,2]}'];
    const pick = (i: number): Buffer => (i % 4 === 0 ? randomBytes(i % 37) : b(texts[i % texts.length] as string));
    const batch = encodeRecordBatch({
      baseOffset: 1234,
      baseTimestamp: 1_700_000_000_000,
      records: Array.from({ length: 500 }, (_, i) => ({
        key: i % 5 === 0 ? null : pick(i + 1),
        value: i % 11 === 0 ? null : pick(i),
        // Header keys are never integer-like, so object key order in the reference is insertion order.
        headers:
          i % 3 === 0
            ? null
            : [
                [b(`h${i % 4}`), i % 7 === 0 ? null : pick(i + 2)] as const,
                [i % 8 === 1 ? Buffer.from([0xff, i % 3]) : b(`x${i % 2}`), pick(i)] as const,
                [b(`h${i % 4}`), pick(i + 5)] as const,
              ],
        timestampDelta: i - 250,
      })),
    });
    const decoded = decodeRecords(batch);
    expect(renderJson(decoded).toString()).toBe(reference(decoded));
  });
});
