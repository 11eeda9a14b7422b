import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import {
  AwsChunkedDecoder,
  SigningKeyCache,
  SigV4Verifier,
  canonicalQuery,
  canonicalUri,
  headerValues,
  parseQuery,
  presignUrl,
  signOutgoing,
  type SignedRequest,
} from '../../src/s3/sigv4';
import { canonicalRequest, parseAmzDate, stringToSign } from '../../src/s3/sigv4/canonical';
import { deriveSigningKey, hmac } from '../../src/s3/sigv4/signing-key';
import { smithySigner } from './helpers/smithy-oracle';
import { expectS3Error } from './helpers/expect-s3-error';

const AK = 'AKIAIOSFODNN7EXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const DOC_TIME = Date.UTC(2013, 4, 24);
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

function request(method: string, target: string, headers: [string, string][]): SignedRequest {
  const q = target.indexOf('?');
  return {
    method,
    rawPath: q < 0 ? target : target.slice(0, q),
    query: parseQuery(q < 0 ? '' : target.slice(q + 1)),
    headers: headerValues(headers.flat()),
    rawQuery: q < 0 ? '' : target.slice(q + 1),
  };
}

const verifier = (region = '') => new SigV4Verifier((k) => (k === AK ? SK : undefined), new SigningKeyCache(), region);


// The six worked examples of "Signature Calculations for the Authorization Header" and
// "Query String Authentication" in the Amazon S3 API reference (2013-05-24, us-east-1).
describe('the SigV4 examples of the S3 API reference', () => {
  const auth = (signed: string, sig: string) => ['Authorization', `AWS4-HMAC-SHA256 Credential=${AK}/20130524/us-east-1/s3/aws4_request,SignedHeaders=${signed},Signature=${sig}`] as [string, string];

  it('verifies the GET Object example with a Range header', () => {
    const r = request('GET', '/test.txt', [
      ['Host', 'examplebucket.s3.amazonaws.com'],
      ['Range', 'bytes=0-9'],
      ['x-amz-content-sha256', EMPTY],
      ['x-amz-date', '20130524T000000Z'],
      auth('host;range;x-amz-content-sha256;x-amz-date', 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'),
    ]);
    expect(verifier().verify(r, DOC_TIME).accessKey).toBe(AK);
  });

  it('verifies the PUT Object example with a Date header and a storage class', () => {
    const r = request('PUT', '/test%24file.text', [
      ['Host', 'examplebucket.s3.amazonaws.com'],
      ['Date', 'Fri, 24 May 2013 00:00:00 GMT'],
      ['x-amz-date', '20130524T000000Z'],
      ['x-amz-storage-class', 'REDUCED_REDUNDANCY'],
      ['x-amz-content-sha256', createHash('sha256').update('Welcome to Amazon S3.').digest('hex')],
      auth('date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class', '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd'),
    ]);
    expect(verifier().verify(r, DOC_TIME).payloadHash).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072');
  });

  it('verifies the GET bucket lifecycle example (a query parameter without a value)', () => {
    const r = request('GET', '/?lifecycle', [
      ['Host', 'examplebucket.s3.amazonaws.com'],
      ['x-amz-date', '20130524T000000Z'],
      ['x-amz-content-sha256', EMPTY],
      auth('host;x-amz-content-sha256;x-amz-date', 'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543'),
    ]);
    expect(() => verifier().verify(r, DOC_TIME)).not.toThrow();
  });

  it('verifies the list objects example (query parameters sorted by name)', () => {
    const r = request('GET', '/?max-keys=2&prefix=J', [
      ['Host', 'examplebucket.s3.amazonaws.com'],
      ['x-amz-date', '20130524T000000Z'],
      ['x-amz-content-sha256', EMPTY],
      auth('host;x-amz-content-sha256;x-amz-date', '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7'),
    ]);
    expect(() => verifier().verify(r, DOC_TIME)).not.toThrow();
  });

  const presigned =
    '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404';

  it('verifies the presigned GET example within its 24 hours and rejects it after', () => {
    const r = request('GET', presigned, [['Host', 'examplebucket.s3.amazonaws.com']]);
    expect(verifier().verify(r, DOC_TIME + 3600_000).presigned).toBe(true);
    expectS3Error(() => verifier().verify(r, DOC_TIME + 86401_000), 'AccessDenied');
  });

  it('produces the presigned example URL itself', () => {
    const url = presignUrl('GET', new URL('https://examplebucket.s3.amazonaws.com/test.txt'), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', new SigningKeyCache(), 86400, DOC_TIME);
    expect(url).toBe('https://examplebucket.s3.amazonaws.com' + presigned);
  });

  it('verifies the streaming upload example: seed signature and every chunk signature', async () => {
    const r = request('PUT', '/examplebucket/chunkObject.txt', [
      ['Host', 's3.amazonaws.com'],
      ['x-amz-date', '20130524T000000Z'],
      ['x-amz-storage-class', 'REDUCED_REDUNDANCY'],
      ['Content-Encoding', 'aws-chunked'],
      ['x-amz-decoded-content-length', '66560'],
      ['Content-Length', '66824'],
      ['x-amz-content-sha256', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD'],
      auth(
        'content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class',
        '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
      ),
    ]);
    const v = verifier().verify(r, DOC_TIME);
    const body = Buffer.concat([
      Buffer.from('10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n'),
      Buffer.alloc(65536, 'a'),
      Buffer.from('\r\n400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n'),
      Buffer.alloc(1024, 'a'),
      Buffer.from('\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n'),
    ]);
    expect(body.length).toBe(66824);
    const signing = { signingKey: v.signingKey, amzDate: v.amzDate, scope: v.scope, seedSignature: v.signature };
    expect(await decode(body, { signing, decodedLength: 66560 }, 1000)).toEqual(Buffer.alloc(66560, 'a'));
    const tampered = Buffer.from(body);
    tampered[66000] = 'b'.charCodeAt(0);
    await expect(decode(tampered, { signing, decodedLength: 66560 }, 4096)).rejects.toMatchObject({ code: 'SignatureDoesNotMatch' });
  });
});

async function decode(body: Buffer, o: ConstructorParameters<typeof AwsChunkedDecoder>[0], piece: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += piece) parts.push(body.subarray(i, i + piece));
  const out: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (b: Buffer) => out.push(b));
  await pipeline(Readable.from(parts), new AwsChunkedDecoder(o), sink);
  return Buffer.concat(out);
}

// Cases of the public SigV4 test suite (awslabs/aws-c-auth, tests/aws-signing-test-suite/v4,
// header-signed and query-signed, the unnormalised variants S3 uses; Apache-2.0).
describe('cases from the public SigV4 test suite', () => {
  const SUITE_SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  const cases: [string, string, [string, string][], string[], string][] = [
    ['get-space-unnormalized', '/example%20space/', [], ['host', 'x-amz-date'], '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741'],
    ['get-vanilla-query-order-key-case', '/?Param2=value2&Param1=value1', [], ['host', 'x-amz-date'], 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500'],
    ['get-vanilla-utf8-query', '/?%E1%88%B4=bar', [], ['host', 'x-amz-date'], '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04'],
    ['get-utf8', '/%E1%88%B4', [], ['host', 'x-amz-date'], '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85'],
    [
      'get-header-key-duplicate',
      '/',
      [['My-Header1', 'value2'], ['My-Header1', 'value2'], ['My-Header1', 'value1']],
      ['host', 'my-header1', 'x-amz-date'],
      'c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea',
    ],
  ];
  it.each(cases)('computes the published signature of %s', (_name, target, extra, signed, signature) => {
    const r = request('GET', target, [['Host', 'example.amazonaws.com'], ...extra, ['X-Amz-Date', '20150830T123600Z']]);
    const canonical = canonicalRequest('GET', canonicalUri(r.rawPath), canonicalQuery(r.query, true), r.headers, signed, EMPTY);
    const sts = stringToSign('20150830T123600Z', '20150830/us-east-1/service/aws4_request', canonical);
    expect(hmac(deriveSigningKey(SUITE_SECRET, '20150830', 'us-east-1', 'service'), sts).toString('hex')).toBe(signature);
  });

  // The query-signed (presigned) variants of the same suite: only `host` signed, the empty
  // payload hash, every X-Amz-* parameter but the signature in the canonical query.
  const CRED = 'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fservice%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host';
  const presignedCases: [string, string, string][] = [
    ['get-vanilla-query-order-key-case', `/?Param2=value2&Param1=value1&${CRED}&X-Amz-Expires=3600`, '86012e2c9ad4d77369f5d81c11f75158aae4f895a085212cc6d3f923d300bed5'],
    ['get-utf8', `/%E1%88%B4?${CRED}&X-Amz-Expires=3600`, '10eae3f14a260bd3911cc6d008d3c576d143b05b62f09782a7a4b37f52178e44'],
    ['get-space-unnormalized', `/example%20space/?${CRED}`, 'df2538a2f0e3833e12597dc3955a6a4545255907051db5a7c6e22550c4ddc380'],
  ];
  it.each(presignedCases)('computes the published presigned signature of %s', (_name, target, signature) => {
    const r = request('GET', `${target}&X-Amz-Signature=${signature}`, [['Host', 'example.amazonaws.com']]);
    const canonical = canonicalRequest('GET', canonicalUri(r.rawPath), canonicalQuery(r.query, true), r.headers, ['host'], EMPTY);
    const sts = stringToSign('20150830T123600Z', '20150830/us-east-1/service/aws4_request', canonical);
    expect(hmac(deriveSigningKey(SUITE_SECRET, '20150830', 'us-east-1', 'service'), sts).toString('hex')).toBe(signature);
  });
});

describe('the canonical URI rule that real S3 clients need', () => {
  it('decodes each segment and re-encodes all but the unreserved set, without normalising dot segments', () => {
    expect(canonicalUri('/b/a%20b+c~d')).toBe('/b/a%20b%2Bc~d');
    expect(canonicalUri("/b/'()!*=&;")).toBe('/b/%27%28%29%21%2A%3D%26%3B');
    expect(canonicalUri('/b/./../x')).toBe('/b/./../x');
    expect(canonicalUri('/b/%25%32%35')).toBe('/b/%25%32%35'.replace('%32%35', '25'));
    expect(canonicalUri('/b/%C3%A9t%C3%A9')).toBe('/b/%C3%A9t%C3%A9');
    expect(canonicalUri('/b/été')).toBe('/b/%C3%A9t%C3%A9');
  });
});

describe('the verifier', () => {
  const now = Date.UTC(2026, 0, 2, 3, 4, 5);

  async function smithySigned(method: string, path: string, query: Record<string, string>, headers: Record<string, string>, at = now): Promise<SignedRequest> {
    const signed = await smithySigner(AK, SK, 'eu-west-1').sign(
      { method, protocol: 'http:', hostname: '127.0.0.1', port: 9000, path, query, headers: { host: '127.0.0.1:9000', ...headers } },
      { signingDate: new Date(at) },
    );
    const raw: [string, string][] = Object.entries(signed.headers).map(([k, v]) => [k, String(v)]);
    const qs = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    return request(method, path + (qs ? '?' + qs : ''), raw);
  }

  it('accepts requests signed by an independent implementation, awkward keys included', async () => {
    for (const key of ['plain.txt', 'a%20b%2Bc', 'x/%27%28%29%21%2A', '%C3%A9t%C3%A9/~', 'dots/./../x']) {
      const r = await smithySigned('GET', `/bucket/${key}`, { 'x-id': 'GetObject' }, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-checksum-mode': 'ENABLED' });
      expect(verifier().verify(r, now).accessKey).toBe(AK);
    }
  });

  it('rejects a forged signature with SignatureDoesNotMatch', async () => {
    const r = await smithySigned('GET', '/bucket/k', {}, { 'x-amz-content-sha256': EMPTY });
    const forged = request('GET', '/bucket/other', [...r.headers.entries()]);
    expectS3Error(() => verifier().verify(forged, now), 'SignatureDoesNotMatch');
  });

  it('rejects a request signed more than 15 minutes ago with RequestTimeTooSkewed', async () => {
    const r = await smithySigned('GET', '/bucket/k', {}, { 'x-amz-content-sha256': EMPTY }, now - 16 * 60_000);
    expectS3Error(() => verifier().verify(r, now), 'RequestTimeTooSkewed');
    expect(() => verifier().verify(r, now - 2 * 60_000)).not.toThrow();
  });

  it('rejects an unknown access key with InvalidAccessKeyId and an unsigned request with AccessDenied', () => {
    expectS3Error(() => verifier().verify(request('GET', '/b/k', [['Host', 'h']]), now), 'AccessDenied');
    const r = request('GET', '/b/k', [
      ['Host', 'h'],
      ['x-amz-date', '20260102T030405Z'],
      ['x-amz-content-sha256', EMPTY],
      ['Authorization', `AWS4-HMAC-SHA256 Credential=NOPE/20260102/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`],
    ]);
    expectS3Error(() => verifier().verify(r, now), 'InvalidAccessKeyId');
  });

  it('takes the request time from a signed HTTP Date header when x-amz-date is absent, and refuses an unsigned one', () => {
    const date = new Date(now).toUTCString(); // Fri, 02 Jan 2026 03:04:05 GMT
    const scope = '20260102/us-east-1/s3/aws4_request';
    const headers = new Map([
      ['date', date],
      ['host', 'h'],
      ['x-amz-content-sha256', EMPTY],
    ]);
    const sign = (signed: string[]) =>
      hmac(deriveSigningKey(SK, '20260102', 'us-east-1', 's3'), stringToSign('20260102T030405Z', scope, canonicalRequest('GET', '/b/k', '', headers, signed, EMPTY))).toString('hex');
    const withDate = (signed: string[]) =>
      request('GET', '/b/k', [...headers.entries(), ['Authorization', `AWS4-HMAC-SHA256 Credential=${AK}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${sign(signed)}`]]);
    expect(verifier().verify(withDate(['date', 'host', 'x-amz-content-sha256']), now).amzDate).toBe('20260102T030405Z');
    expectS3Error(() => verifier().verify(withDate(['host', 'x-amz-content-sha256']), now), 'AccessDenied');
    expectS3Error(() => verifier().verify(withDate(['date', 'host', 'x-amz-content-sha256']), now + 16 * 60_000), 'RequestTimeTooSkewed');
  });

  it('enforces a configured region', async () => {
    const r = await smithySigned('GET', '/bucket/k', {}, { 'x-amz-content-sha256': EMPTY });
    expectS3Error(() => verifier('us-east-1').verify(r, now), 'AuthorizationHeaderMalformed');
    expect(() => verifier('eu-west-1').verify(r, now)).not.toThrow();
  });

  it('accepts presigned URLs up to 7 days and rejects longer or non-positive expiry with 403', () => {
    const keys = new SigningKeyCache();
    const creds = { accessKeyId: AK, secretAccessKey: SK };
    const url = (exp: number) => new URL(presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/k%20ey'), creds, 'us-east-1', keys, exp, now));
    const req = (u: URL) => request('GET', u.pathname + u.search, [['Host', u.host]]);
    expect(verifier().verify(req(url(604800)), now + 604799_000).presigned).toBe(true);
    expectS3Error(() => verifier().verify(req(url(604800)), now + 604801_000), 'AccessDenied');
    expectS3Error(() => verifier().verify(req(url(604801)), now), 'AccessDenied');
    expectS3Error(() => verifier().verify(req(url(0)), now), 'AccessDenied');
    expectS3Error(() => verifier().verify(req(url(-7)), now), 'AccessDenied');
  });

  it('remembers a verified presigned URL but never lets a different request reuse its result', () => {
    const v = verifier();
    const u = new URL(presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/k?a=1&b=2'), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', new SigningKeyCache(), 600, now));
    const r = request('GET', u.pathname + u.search, [['Host', u.host]]);
    expect(v.verify(r, now).presigned).toBe(true);
    expect(v.verify(r, now + 60_000).presigned).toBe(true);
    expectS3Error(() => v.verify(r, now + 601_000), 'AccessDenied');
    // Keyed by the raw request target (what the server passes)...
    for (const extra of ['&b=3', '&c', '&X-Amz-Expires=1']) {
      const longer = request('GET', u.pathname + u.search + extra, [['Host', u.host]]);
      expectS3Error(() => v.verify(longer, now), 'SignatureDoesNotMatch');
    }
    // ...or, without it, by the decoded pairs, which a value with quotes and commas cannot smuggle.
    const decodedOnly: SignedRequest = { ...r, rawQuery: undefined };
    expect(v.verify(decodedOnly, now).presigned).toBe(true);
    const smuggled: SignedRequest = { ...decodedOnly, query: r.query.filter(([k]) => k !== 'b').map(([k, val]) => (k === 'a' ? ['a', '1","b=2'] : [k, val]) as [string, string]) };
    expectS3Error(() => v.verify(smuggled, now), 'SignatureDoesNotMatch');
    const otherHost: SignedRequest = { ...r, headers: new Map([...r.headers, ['host', 'evil:1']]) };
    expectS3Error(() => v.verify(otherHost, now), 'SignatureDoesNotMatch');
  });

  it('reuses a remembered presigned result only for the same method, path, payload-hash header and signed header values', () => {
    // A presigned GET that signs host and x-amz-meta-a, built by hand (presignUrl signs host only).
    const amzDate = '20260102T030405';
    const scope = '20260102/us-east-1/s3/aws4_request';
    const pairs: [string, string][] = [
      ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
      ['X-Amz-Credential', `${AK}/${scope}`],
      ['X-Amz-Date', amzDate + 'Z'],
      ['X-Amz-Expires', '600'],
      ['X-Amz-SignedHeaders', 'host;x-amz-meta-a'],
    ];
    const signedHeaders = new Map([['host', '127.0.0.1:9000'], ['x-amz-meta-a', 'v']]);
    const canonical = canonicalRequest('GET', '/bucket/k', canonicalQuery(pairs, false), signedHeaders, ['host', 'x-amz-meta-a'], 'UNSIGNED-PAYLOAD');
    const signature = hmac(deriveSigningKey(SK, '20260102', 'us-east-1', 's3'), stringToSign(amzDate + 'Z', scope, canonical)).toString('hex');
    const target = `/bucket/k?${canonicalQuery(pairs, false)}&X-Amz-Signature=${signature}`;
    const at = (method: string, path: string, headers: [string, string][]) => request(method, path + target.slice('/bucket/k'.length), headers);
    const good: [string, string][] = [['Host', '127.0.0.1:9000'], ['x-amz-meta-a', 'v']];
    const v = verifier();
    const rawQuery = target.slice(target.indexOf('?') + 1);
    expect(v.verify(at('GET', '/bucket/k', good), now).presigned).toBe(true);
    // Verified once: not remembered yet (a URL used once leaves no entry).
    expect(v.knownQuery(rawQuery)).toBeUndefined();
    expect(v.verify(at('GET', '/bucket/k', good), now + 1000).presigned).toBe(true);
    // The verified request's parsed query is handed back for its raw query, and only for it.
    expect(v.knownQuery(rawQuery)).toEqual(parseQuery(rawQuery));
    expectS3Error(() => v.verify(request('GET', target + '&b=3', good), now), 'SignatureDoesNotMatch');
    expect(v.knownQuery(rawQuery + '&b=3')).toBeUndefined();
    expect(v.knownQuery('')).toBeUndefined();
    // The same raw query with anything else the signature covers changed is verified in full, and fails.
    expectS3Error(() => v.verify(at('HEAD', '/bucket/k', good), now), 'SignatureDoesNotMatch');
    expectS3Error(() => v.verify(at('GET', '/bucket/other', good), now), 'SignatureDoesNotMatch');
    expectS3Error(() => v.verify(at('GET', '/bucket/k', [['Host', '127.0.0.1:9000'], ['x-amz-meta-a', 'w']]), now), 'SignatureDoesNotMatch');
    expectS3Error(() => v.verify(at('GET', '/bucket/k', [['Host', '127.0.0.1:9000']]), now), 'SignatureDoesNotMatch');
    expectS3Error(() => v.verify(at('GET', '/bucket/k', [['Host', '127.0.0.2:9000'], ['x-amz-meta-a', 'v']]), now), 'SignatureDoesNotMatch');
    expectS3Error(() => v.verify(at('GET', '/bucket/k', [...good, ['x-amz-content-sha256', EMPTY]]), now), 'SignatureDoesNotMatch');
    // Outside its window the remembered result does not count: too early, then expired.
    expectS3Error(() => v.verify(at('GET', '/bucket/k', good), now - 16 * 60_000), 'AccessDenied');
    expectS3Error(() => v.verify(at('GET', '/bucket/k', good), now + 601_000), 'AccessDenied');
    // The failures did not evict the verified request.
    expect(v.verify(at('GET', '/bucket/k', good), now + 2000).presigned).toBe(true);
    // Unsigned headers may differ: they are not covered by the signature.
    expect(v.verify(at('GET', '/bucket/k', [...good, ['range', 'bytes=0-1']]), now).presigned).toBe(true);
  });

  it('caches one derived signing key per access key, day and region', async () => {
    const keys = new SigningKeyCache();
    const v = new SigV4Verifier(() => SK, keys);
    for (let i = 0; i < 3; i++) v.verify(await smithySigned('GET', `/bucket/k${i}`, {}, { 'x-amz-content-sha256': EMPTY }), now);
    expect(keys.size).toBe(1);
  });
});

describe('the origin signer', () => {
  it('signs requests that the independent implementation signs identically', async () => {
    const keys = new SigningKeyCache();
    const now = Date.UTC(2026, 1, 3, 4, 5, 6);
    const headers: Record<string, string> = { 'content-type': 'text/plain', 'x-amz-meta-a': 'b  c', 'x-amz-copy-source': '/src/a%20b' };
    const query: [string, string][] = [['uploadId', 'x y'], ['partNumber', '2']];
    signOutgoing({ method: 'PUT', host: 'origin:9000', path: '/bucket/a%20b%2Bc', query, headers }, { accessKeyId: 'OK', secretAccessKey: 'OS', sessionToken: 'TOK' }, 'eu-central-1', keys, now);
    const signedNames = /SignedHeaders=([^,]+)/.exec(headers['authorization']!)![1]!.split(';');
    const subset: Record<string, string> = {};
    for (const n of signedNames) subset[n] = n === 'host' ? 'origin:9000' : headers[n]!;
    const oracle = await smithySigner('OK', 'OS', 'eu-central-1', 'TOK').sign(
      { method: 'PUT', protocol: 'http:', hostname: 'origin', port: 9000, path: '/bucket/a%20b%2Bc', query: Object.fromEntries(query), headers: subset },
      { signingDate: new Date(now) },
    );
    expect(headers['authorization']).toBe(oracle.headers['authorization']);
  });
});

describe('the aws-chunked decoder', () => {
  function frame(chunks: Buffer[], trailer: string): Buffer {
    const parts: Buffer[] = [];
    for (const c of chunks) parts.push(Buffer.from(c.length.toString(16) + '\r\n'), c, Buffer.from('\r\n'));
    parts.push(Buffer.from('0\r\n' + trailer + '\r\n'));
    return Buffer.concat(parts);
  }
  const crc = (b: Buffer) => {
    const x = Buffer.alloc(4);
    x.writeUInt32BE(zlib.crc32(b) >>> 0);
    return x.toString('base64');
  };

  it('decodes STREAMING-UNSIGNED-PAYLOAD-TRAILER bodies and checks the CRC32 trailer, one byte at a time too', async () => {
    const data = Buffer.from('hello aws-chunked world'.repeat(100));
    const body = frame([data.subarray(0, 1000), data.subarray(1000)], `x-amz-checksum-crc32:${crc(data)}\r\n`);
    const o = { decodedLength: data.length, trailers: ['x-amz-checksum-crc32'] };
    expect(await decode(body, o, 7)).toEqual(data);
    expect(await decode(body, o, 1)).toEqual(data);
  });

  it('rejects a body whose trailer checksum is wrong with BadDigest before passing on its last chunk', async () => {
    const data = Buffer.from('0123456789');
    const body = frame([data], `x-amz-checksum-crc32:${crc(Buffer.from('other'))}\r\n`);
    const seen: Buffer[] = [];
    const dec = new AwsChunkedDecoder({ trailers: ['x-amz-checksum-crc32'] });
    dec.on('data', (b: Buffer) => seen.push(b));
    await expect(pipeline(Readable.from([body]), dec)).rejects.toMatchObject({ code: 'BadDigest' });
    expect(seen).toHaveLength(0);
  });

  it('rejects a body shorter than x-amz-decoded-content-length with IncompleteBody', async () => {
    await expect(decode(frame([Buffer.from('abc')], ''), { decodedLength: 4 }, 100)).rejects.toMatchObject({ code: 'IncompleteBody' });
    const truncated = frame([Buffer.from('abc')], '').subarray(0, 6);
    await expect(decode(truncated, {}, 100)).rejects.toMatchObject({ code: 'IncompleteBody' });
  });

  it('parses amz dates', () => {
    expect(parseAmzDate('20130524T000000Z')).toBe(DOC_TIME);
    expect(Number.isNaN(parseAmzDate('2013-05-24'))).toBe(true);
    expect(parseAmzDate('20260102T030405Z')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    for (const bad of ['20130524T000000', '20130524T000000ZZ', '20130524 000000Z', '2013052xT000000Z', '20130524T00000aZ', '2013O524T000000Z', '\uff12013524T000000Z', ''])
      expect(Number.isNaN(parseAmzDate(bad))).toBe(true);
  });
});
