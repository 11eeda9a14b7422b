#!/usr/bin/env node
// Micro-benchmark of svc-cache's SigV4 verification (dist/ build): µs per verification of a
// header-signed request whose signature is new each time (signing key cached), and of a
// presigned URL repeated byte for byte (the remembered-result path), and of distinct presigned
// URLs (the benchmark's "new signature per request").
'use strict';

const path = require('node:path');
const ROOT = path.resolve(process.env.SVC_ROOT || path.join(__dirname, '..', '..')); // SVC_ROOT: another build to compare
const sig = require(path.join(ROOT, 'dist', 's3', 'sigv4'));
const { canonicalRequest, stringToSign, formatAmzDate } = require(path.join(ROOT, 'dist', 's3', 'sigv4', 'canonical'));
const { hmac, deriveSigningKey } = require(path.join(ROOT, 'dist', 's3', 'sigv4', 'signing-key'));

const N = Number(process.env.N || 20000);
const now = Date.now();
const amzDate = formatAmzDate(now);
const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
const key = deriveSigningKey('S', amzDate.slice(0, 8), 'us-east-1', 's3');

function request(i) {
  const headers = new Map([
    ['host', '127.0.0.1:9000'],
    ['x-amz-content-sha256', 'UNSIGNED-PAYLOAD'],
    ['x-amz-date', amzDate],
  ]);
  const path_ = `/bucket/object-${i}`;
  const signed = ['host', 'x-amz-content-sha256', 'x-amz-date'];
  const signature = hmac(key, stringToSign(amzDate, scope, canonicalRequest('GET', path_, 'x-id=GetObject', headers, signed, 'UNSIGNED-PAYLOAD'))).toString('hex');
  headers.set('authorization', `AWS4-HMAC-SHA256 Credential=A/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`);
  return { method: 'GET', rawPath: path_, query: [['x-id', 'GetObject']], headers };
}

const fresh = Array.from({ length: N }, (_, i) => request(i));
const v = new sig.SigV4Verifier(() => 'S', new sig.SigningKeyCache());
/** µs per call of the fastest of PASSES passes (the first ones warm the JIT; a loaded machine slows some). */
const PASSES = Number(process.env.PASSES || 5);
function bench(requests) {
  let best = Infinity;
  for (let p = 0; p < PASSES; p++) {
    const t = process.hrtime.bigint();
    for (const r of requests) v.verify(r, now);
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e3 / requests.length);
  }
  return best;
}
const freshUs = bench(fresh);
// A presigned URL repeated byte for byte, as the server passes it (raw query included).
const u = new URL(sig.presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/object'), { accessKeyId: 'A', secretAccessKey: 'S' }, 'us-east-1', new sig.SigningKeyCache(), 3600, now));
const rawQuery = u.search.slice(1);
const same = { method: 'GET', rawPath: u.pathname, query: sig.parseQuery(rawQuery), rawQuery, headers: new Map([['host', u.host]]) };
const sameUs = bench(Array.from({ length: N }, () => same));
// Distinct presigned URLs (X-Amz-Date one second apart), more than the verifier remembers.
const keys = new sig.SigningKeyCache();
const presignedFresh = Array.from({ length: N }, (_, i) => {
  const p = new URL(sig.presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/object'), { accessKeyId: 'A', secretAccessKey: 'S' }, 'us-east-1', keys, 604800, now - i * 1000));
  const raw = p.search.slice(1);
  return { method: 'GET', rawPath: p.pathname, query: sig.parseQuery(raw), rawQuery: raw, headers: new Map([['host', p.host]]) };
});
const presignedUs = bench(presignedFresh);
process.stdout.write(`SigV4 verify: ${freshUs.toFixed(1)} µs per new header signature, ${presignedUs.toFixed(1)} µs per new presigned URL, ${sameUs.toFixed(1)} µs per repeated presigned URL\n`);
