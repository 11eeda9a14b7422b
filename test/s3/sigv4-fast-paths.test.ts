// The shortcuts of SigV4 verification give exactly the full computation's answers: the canonical
// query taken from the raw query, HMAC as two one-shot hashes, the signature comparison.
import { createHmac, randomBytes } from 'node:crypto';
import { SigningKeyCache, SigV4Verifier, canonicalQuery, headerValues, parseQuery, presignUrl, uriDecode, type SignedRequest } from '../../src/s3/sigv4';
import { canonicalQueryOfRaw } from '../../src/s3/sigv4/encoding';
import { HmacKey, sameSignature } from '../../src/s3/sigv4/hmac-key';
import { signatureMark } from '../../src/s3/sigv4/remembered';
import { expectS3Error } from './helpers/expect-s3-error';

const AK = 'AKIAIOSFODNN7EXAMPLE';
const SK = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const now = Date.UTC(2026, 0, 2, 3, 4, 5);

/** A deterministic pseudo-random sequence (xorshift32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

describe('the canonical query taken from the raw query', () => {
  const slow = (raw: string) => canonicalQuery(parseQuery(raw), true);

  it('is the decoded-and-re-encoded canonical query for every raw query it accepts, and declines the rest', () => {
    // Pieces that make canonical and non-canonical spellings: escapes of reserved, unreserved and
    // non-ASCII bytes, lower-case hex, malformed escapes, '+', a second '=', empty pairs, the signature.
    const pieces = ['a', 'Z', '0', '-', '.', '_', '~', 'X-Amz-Signature', 'X-Amz-Date', 'x-id', '%2F', '%2f', '%20', '%3D', '%26', '%41', '%7E', '%25', '%C3%A9', '%FF', '%', '%2', '+', '=', '=', '&', '&', '&', 'é', ' ', '/'];
    const next = rng(12345);
    let accepted = 0;
    let declined = 0;
    for (let n = 0; n < 20000; n++) {
      let raw = '';
      const len = 1 + Math.floor(next() * 12);
      for (let i = 0; i < len; i++) raw += pieces[Math.floor(next() * pieces.length)];
      const fast = canonicalQueryOfRaw(raw, true);
      if (fast === undefined) declined++;
      else {
        accepted++;
        expect([raw, fast]).toEqual([raw, slow(raw)]);
      }
    }
    // Both branches were exercised in earnest.
    expect(accepted).toBeGreaterThan(2000);
    expect(declined).toBeGreaterThan(2000);
  });

  it('sorts by name before value, also when one name is a prefix of another', () => {
    for (const raw of ['b=1&a=2', 'a-b=1&a=1', 'a=2&a=1', 'a=1&a', 'X-Amz-Signature=f&c=&b', 'x=1&X=1', 'a.b=1&a=1&a0=1'])
      expect([raw, canonicalQueryOfRaw(raw, true)]).toEqual([raw, slow(raw)]);
    expect(canonicalQueryOfRaw('a-b=1&a=1', true)).toBe('a=1&a-b=1');
  });

  it('leaves X-Amz-Signature out only when asked, and only under that exact name', () => {
    expect(canonicalQueryOfRaw('a=1&X-Amz-Signature=ab&b=2', true)).toBe('a=1&b=2');
    expect(canonicalQueryOfRaw('a=1&X-Amz-Signature=ab&b=2', false)).toBe('X-Amz-Signature=ab&a=1&b=2');
    expect(canonicalQueryOfRaw('X-Amz-SignatureX=1', true)).toBe('X-Amz-SignatureX=1');
    expect(canonicalQueryOfRaw('X-Amz-Signatur=1', true)).toBe('X-Amz-Signatur=1');
    // An escaped spelling of the name is not canonical: the full path decodes it (and drops it).
    expect(canonicalQueryOfRaw('X%2DAmz-Signature=1&a=1', true)).toBeUndefined();
    expect(slow('X%2DAmz-Signature=1&a=1')).toBe('a=1');
  });

  it('declines spellings that decoding would change', () => {
    for (const raw of ['a=%2f', 'a=%41', 'a=b=c', 'a=+', 'a=%C3%A9', 'a=%', 'a=%G1', 'a=é', 'a= '])
      expect([raw, canonicalQueryOfRaw(raw, true)]).toEqual([raw, undefined]);
  });
});

describe('parsing the query in one pass', () => {
  /** The straightforward reading: split on `&`, drop empty parts, split each at its first `=`. */
  const reference = (raw: string): [string, string][] =>
    raw
      .split('&')
      .filter((p) => p !== '')
      .map((p) => {
        const eq = p.indexOf('=');
        return eq < 0 ? [uriDecode(p), ''] : [uriDecode(p.slice(0, eq)), uriDecode(p.slice(eq + 1))];
      });

  /** 20,000 queries made of `pieces` (up to `maxPieces` each, seeded) parse as the straightforward reading. */
  const parsesLikeReference = (pieces: string[], seed: number, maxPieces: number): void => {
    const next = rng(seed);
    for (let n = 0; n < 20000; n++) {
      let raw = '';
      const len = Math.floor(next() * maxPieces);
      for (let i = 0; i < len; i++) raw += pieces[Math.floor(next() * pieces.length)];
      expect([raw, parseQuery(raw)]).toEqual([raw, reference(raw)]);
    }
  };

  it('gives the pairs of the straightforward reading for any query', () => {
    parsesLikeReference(['a', 'b', '=', '=', '&', '&', '%2F', '%', 'x', '%C3%A9', '+'], 99, 12);
  });

  it('gives the same pairs when names are, or nearly are, the presigned and SDK parameter names', () => {
    // Known names come back as shared constants: only their exact spelling may, and the strings
    // must equal the straightforward reading's in every case.
    const pieces = ['X-Amz-Date', 'X-Amz-Signature', 'X-Amz-SignedHeaders', 'X-Amz-Credential', 'x-id', 'x-amz-checksum-mode', 'X-Amz-Content-Sha256', 'X-Amz-Security-Token', 'X-Amz-Expires', 'X-Amz-Algorithm', 'x-amz-user-agent', 'x-amz-date', 'X-Amz-Dat', 'X-Amz-%44ate', 'x-i', 'X', '=', '=', '&', '&', '%2F', 'v'];
    parsesLikeReference(pieces, 4242, 8);
    expect(parseQuery('X-Amz-Date=1&x-amz-date=2&X-Amz-%44ate=3&X-Amz-Datex=4')).toEqual([
      ['X-Amz-Date', '1'],
      ['x-amz-date', '2'],
      ['X-Amz-Date', '3'],
      ['X-Amz-Datex', '4'],
    ]);
  });

  it('reads a long query of pairs without `=` in linear time', () => {
    const raw = 'a&'.repeat(50_000);
    const started = process.hrtime.bigint();
    expect(parseQuery(raw)).toHaveLength(50_000);
    // Quadratic searching would take seconds here; linear takes milliseconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
  });
});

describe('HMAC-SHA256 under a prepared key', () => {
  it('equals createHmac for short, long and non-ASCII messages and keys of any length', () => {
    const next = rng(777);
    for (const keyLen of [0, 1, 32, 64, 65, 200]) {
      const key = randomBytes(keyLen);
      const k = new HmacKey(key);
      for (const msg of ['', 'AWS4-HMAC-SHA256\n20260102T030405Z\n20260102/us-east-1/s3/aws4_request\nabc', 'é'.repeat(300), '𝄞x'.repeat(500), 'a'.repeat(5000), 'short again']) {
        expect(k.hex(msg)).toBe(createHmac('sha256', key).update(msg, 'utf8').digest('hex'));
      }
      // Random lengths around the scratch block's growth points, in a different order each key.
      for (let i = 0; i < 50; i++) {
        const msg = 'x'.repeat(Math.floor(next() * 2000)) + 'ü';
        expect(k.hex(msg)).toBe(createHmac('sha256', key).update(msg, 'utf8').digest('hex'));
      }
      expect(k.key).toBe(key);
    }
  });

  it('compares signatures in full: any difference, case or length refuses', () => {
    const sig = createHmac('sha256', 'k').update('m').digest('hex');
    expect(sameSignature(sig, sig)).toBe(true);
    for (let i = 0; i < sig.length; i++) {
      const flipped = sig.slice(0, i) + (sig[i] === '0' ? '1' : '0') + sig.slice(i + 1);
      expect(sameSignature(flipped, sig)).toBe(false);
    }
    if (/[a-f]/.test(sig)) expect(sameSignature(sig.toUpperCase(), sig)).toBe(false);
    expect(sameSignature(sig.slice(0, 63), sig)).toBe(false);
    expect(sameSignature(sig + '0', sig)).toBe(false);
    expect(sameSignature('', sig)).toBe(false);
  });
});

describe('presigned verification through the raw-query path', () => {
  const req = (target: string, host = '127.0.0.1:9000', method = 'GET'): SignedRequest => {
    const q = target.indexOf('?');
    const rawQuery = target.slice(q + 1);
    return { method, rawPath: target.slice(0, q), query: parseQuery(rawQuery), rawQuery, headers: headerValues(['Host', host]) };
  };
  const presigned = (url: string) => {
    const u = new URL(presignUrl('GET', new URL(url), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', new SigningKeyCache(), 600, now));
    return u.pathname + u.search;
  };
  const verifier = () => new SigV4Verifier((k) => (k === AK ? SK : undefined), new SigningKeyCache());

  it('accepts the URL as signed, in any pair order, and refuses any change to a name or value', () => {
    const target = presigned('http://127.0.0.1:9000/bucket/k?x-id=GetObject&response-content-type=text%2Fplain');
    expect(canonicalQueryOfRaw(target.slice(target.indexOf('?') + 1), true)).toBeDefined();
    expect(verifier().verify(req(target), now).presigned).toBe(true);
    // SigV4 signs the sorted pairs, so the order they are sent in does not matter (as at S3).
    const [path, raw] = target.split('?') as [string, string];
    expect(verifier().verify(req(`${path}?${raw.split('&').reverse().join('&')}`), now).presigned).toBe(true);
    for (const changed of [
      target.replace('text%2Fplain', 'text%2Fhtml'),
      target.replace('text%2Fplain', 'text%2F'),
      target.replace('x-id=GetObject', 'x-id=GetObjectX'),
      target.replace('x-id=GetObject', 'x-ie=GetObject'),
      target.replace('x-id=GetObject&', ''),
      target + '&extra=1',
      target + '&extra',
      target.replace('X-Amz-Expires=600', 'X-Amz-Expires=601'),
    ])
      expectS3Error(() => verifier().verify(req(changed), now), 'SignatureDoesNotMatch');
    // Other spellings of the same decoded pairs take the full path and verify the same way.
    expect(verifier().verify(req(target.replace('text%2Fplain', 'text%2fplain')), now).presigned).toBe(true);
    expect(verifier().verify(req(target.replace('x-id=GetObject', 'x-id=%47etObject')), now).presigned).toBe(true);
    expectS3Error(() => verifier().verify(req(target.replace('text%2Fplain', 'text%2fhtml')), now), 'SignatureDoesNotMatch');
    // The other fields the signature covers still count.
    expectS3Error(() => verifier().verify(req(target, '127.0.0.1:9001'), now), 'SignatureDoesNotMatch');
    expectS3Error(() => verifier().verify(req(target, undefined, 'HEAD'), now), 'SignatureDoesNotMatch');
    expectS3Error(() => verifier().verify(req(target.replace('/bucket/k', '/bucket/j')), now), 'SignatureDoesNotMatch');
    expectS3Error(() => verifier().verify(req(target), now + 601_000), 'AccessDenied');
  });

  it('refuses a parameter name in another case and a SignedHeaders list other than the one signed', () => {
    const target = presigned('http://127.0.0.1:9000/bucket/k');
    expect(verifier().verify(req(target), now).presigned).toBe(true);
    // S3 reads parameter names case-sensitively: without X-Amz-Date the query is incomplete.
    expectS3Error(() => verifier().verify(req(target.replace('X-Amz-Date=', 'x-amz-date=')), now), 'AuthorizationQueryParametersError');
    expectS3Error(() => verifier().verify(req(target.replace('X-Amz-Credential=', 'X-Amz-credential=')), now), 'AuthorizationQueryParametersError');
    // The signed header list as sent is part of the canonical request.
    const h = { ...req(target), headers: headerValues(['Host', '127.0.0.1:9000', 'X-Extra', '1']) };
    const withExtra = target.replace('X-Amz-SignedHeaders=host', 'X-Amz-SignedHeaders=host%3Bx-extra');
    const q = withExtra.slice(withExtra.indexOf('?') + 1);
    expectS3Error(() => verifier().verify({ ...h, rawQuery: q, query: parseQuery(q) }, now), 'SignatureDoesNotMatch');
    // The same names spelled with an escape are the same pairs: they verify, by the full path.
    expect(verifier().verify(req(target.replace('X-Amz-Date=', 'X-Amz-%44ate=')), now).presigned).toBe(true);
  });

  it('reads X-Amz-Expires as an integer only: anything else is a malformed query, zero or less is refused', () => {
    const target = presigned('http://127.0.0.1:9000/bucket/k');
    for (const bad of ['abc', '', '1.5', '1e3', '+60', '60 ', '-'])
      expectS3Error(() => verifier().verify(req(target.replace('X-Amz-Expires=600', `X-Amz-Expires=${encodeURIComponent(bad)}`)), now), 'AuthorizationQueryParametersError');
    for (const refused of ['0', '-5', '604801']) expectS3Error(() => verifier().verify(req(target.replace('X-Amz-Expires=600', `X-Amz-Expires=${refused}`)), now), 'AccessDenied');
  });

  it('refuses a signature that differs in one hex digit or is sent in upper case', () => {
    const target = presigned('http://127.0.0.1:9000/bucket/k');
    const sig = /X-Amz-Signature=([0-9a-f]{64})/.exec(target)![1]!;
    const last = sig[63] === '0' ? '1' : '0';
    expectS3Error(() => verifier().verify(req(target.replace(sig, sig.slice(0, 63) + last)), now), 'SignatureDoesNotMatch');
    if (/[a-f]/.test(sig)) expectS3Error(() => verifier().verify(req(target.replace(sig, sig.toUpperCase())), now), 'SignatureDoesNotMatch');
  });
});

describe('remembered presigned results, found by the signature as written', () => {
  it('reads the mark only from an X-Amz-Signature pair of hex digits', () => {
    expect(signatureMark('X-Amz-Signature=abcdef0123')).toBe(0xabcdef0);
    expect(signatureMark('a=1&X-Amz-Signature=ABCDEF0123&b=2')).toBe(0xabcdef0);
    expect(signatureMark('a=1&xX-Amz-Signature=abcdef0123')).toBe(-1);
    expect(signatureMark('a=X-Amz-Signature=abcdef0123')).toBe(-1);
    expect(signatureMark('X-Amz-Signature=%61bcdef0123')).toBe(-1);
    expect(signatureMark('X-Amz-Signature=abc')).toBe(-1);
    expect(signatureMark('')).toBe(-1);
  });

  const verifier = () => new SigV4Verifier((k) => (k === AK ? SK : undefined), new SigningKeyCache());
  const req = (target: string): SignedRequest => {
    const q = target.indexOf('?');
    const rawQuery = target.slice(q + 1);
    return { method: 'GET', rawPath: target.slice(0, q), query: parseQuery(rawQuery), rawQuery, headers: headerValues(['Host', '127.0.0.1:9000']) };
  };

  it('remembers a URL on its second use only, and hands its pairs back for that exact raw query', () => {
    const u = new URL(presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/k?a=1'), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', new SigningKeyCache(), 600, now));
    const target = u.pathname + u.search;
    const raw = u.search.slice(1);
    const v = verifier();
    v.verify(req(target), now);
    expect(v.knownQuery(raw)).toBeUndefined();
    v.verify(req(target), now);
    expect(v.knownQuery(raw)).toEqual(parseQuery(raw));
    // Same signature and mark, another raw query: not the remembered one.
    const moved = raw.split('&').reverse().join('&');
    expect(v.knownQuery(moved)).toBeUndefined();
    expect(v.knownQuery(raw.replace('a=1', 'a=2'))).toBeUndefined();
    expectS3Error(() => v.verify(req(target.replace('a=1', 'a=2')), now), 'SignatureDoesNotMatch');
    // A different spelling of the same pairs verifies in full (and is right).
    expect(v.verify(req(`${u.pathname}?${moved}`), now).presigned).toBe(true);
  });

  it('remembers a URL only when it comes back within the last 4096 full verifications', () => {
    const keys = new SigningKeyCache();
    const url = (i: number) => {
      const u = new URL(presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/k'), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', keys, 604800, now - i * 1000));
      return { target: u.pathname + u.search, raw: u.search.slice(1) };
    };
    const a = url(0);
    const v = verifier();
    v.verify(req(a.target), now);
    // A cycle through more URLs than are remembered: by the time `a` comes back, an entry for it
    // would have been replaced, so none is made.
    for (let i = 1; i <= 4100; i++) v.verify(req(url(i).target), now);
    v.verify(req(a.target), now);
    expect(v.knownQuery(a.raw)).toBeUndefined();
    // Back again soon after: remembered.
    v.verify(req(a.target), now);
    expect(v.knownQuery(a.raw)).toEqual(parseQuery(a.raw));
  });

  it('verifies a URL whose signature is percent-encoded in full every time, never from memory', () => {
    const u = new URL(presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/k'), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', new SigningKeyCache(), 600, now));
    const sig = /X-Amz-Signature=([0-9a-f]{64})/.exec(u.search)![1]!;
    const encoded = u.pathname + u.search.replace(sig, sig.replace(/[a-f]/, (c) => '%' + c.charCodeAt(0).toString(16)));
    const raw = encoded.slice(encoded.indexOf('?') + 1);
    const v = verifier();
    for (let i = 0; i < 3; i++) expect(v.verify(req(encoded), now).presigned).toBe(true);
    expect(v.knownQuery(raw)).toBeUndefined();
    expectS3Error(() => v.verify(req(encoded), now + 601_000), 'AccessDenied');
  });
});

