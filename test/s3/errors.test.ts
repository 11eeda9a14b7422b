import * as fs from 'node:fs';
import * as path from 'node:path';
import { S3_ERRORS } from '../../src/s3';
import { errorXml } from '../../src/s3/errors';

describe('svc-cache S3 errors', () => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 's3-cache.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Errors'), doc.indexOf('## Metrics'));
  const documented = new Map([...section.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));

  it('documents every code with its status, and nothing else', () => {
    expect(Object.fromEntries(documented)).toEqual({ ...S3_ERRORS });
  });

  it('renders S3-shaped XML with escaped text', () => {
    expect(errorXml('NoSuchKey', 'a <b> & c', '/b/k&1', 'RID', { Key: 'k&1' })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>a &lt;b&gt; &amp; c</Message><Key>k&amp;1</Key><Resource>/b/k&amp;1</Resource><RequestId>RID</RequestId></Error>',
    );
  });
});
