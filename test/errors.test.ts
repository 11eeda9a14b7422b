import * as fs from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, SvcError } from '../src/errors';
import { statusOf } from '../src/gateway/kit/http-errors';

const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => ({ code: m[1]!, status: Number(m[2]) }));

describe('the error list', () => {
  it('documents every code the product uses, and no code it does not', () => {
    expect(rows.map((r) => r.code).sort()).toEqual([...ERROR_CODES].sort());
  });

  it('documents the HTTP status each code gets on the protocol listener', () => {
    for (const r of rows) expect([r.code, statusOf(r.code as (typeof ERROR_CODES)[number])]).toEqual([r.code, r.status]);
  });

  it('keeps a stack only for the codes answered with a 5xx (a refusal costs no stack capture)', () => {
    for (const code of ERROR_CODES) {
      const e = new SvcError(code, 'why');
      const frames = (e.stack ?? '').split('\n').slice(1);
      expect([code, e.stack!.split('\n')[0], frames.length > 0]).toEqual([code, 'SvcError: why', statusOf(code) >= 500]);
    }
    // The process's own limit is left as it was.
    expect(new Error('x').stack!.split('\n').length).toBeGreaterThan(1);
  });
});
