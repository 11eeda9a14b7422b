import * as fs from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES } from '../src/errors';
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
});
