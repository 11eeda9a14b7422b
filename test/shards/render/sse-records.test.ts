import { renderJson } from '../../../src/shards/render/json-records';
import { renderSse } from '../../../src/shards/render/sse-records';
import { type DecodedRecord } from '../../../src/util/record-batch';

const b = (s: string): Buffer => Buffer.from(s);

function rec(over: Partial<DecodedRecord>): DecodedRecord {
  return { offset: 0, timestamp: 1000, key: null, value: b('x'), headers: [], ...over };
}

describe('renderSse', () => {
  it('renders one record event per record: id = seq, data = the record of the JSON read format', () => {
    const records = [
      rec({ offset: 41, key: b('k'), value: b('plain') }),
      rec({ offset: 42, value: b('line one\nline two\r\n"quoted" \u2028'), headers: [[b('h'), b('v')]] }),
      rec({ offset: 43, value: Buffer.from([0xff, 0x00]) }),
      rec({ offset: 44, value: null }),
    ];
    const json = JSON.parse(renderJson(records).toString()) as unknown[];
    const expected = records.map((r, i) => `event: record\nid: ${r.offset}\ndata: ${JSON.stringify(json[i])}\n\n`).join('');
    expect(renderSse(records).toString()).toBe(expected);
  });

  it('keeps every data payload on one line, whatever the record holds', () => {
    const out = renderSse([rec({ value: b('a\nb\rc\r\nd') })]).toString();
    const lines = out.split(/\r\n|\r|\n/);
    expect(lines).toHaveLength(5); // event, id, data, blank, blank
    expect(JSON.parse(lines[2]!.slice('data: '.length))).toMatchObject({ body: 'a\nb\rc\r\nd' });
  });

  it('renders nothing for no records', () => {
    expect(renderSse([]).length).toBe(0);
  });
});
