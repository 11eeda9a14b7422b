#!/usr/bin/env node
// Micro-benchmark of svc-cache's SigV4 verification (dist/ build): µs per verification of a
// header-signed request whose signature is new each time (signing key cached), and of a
// presigned URL repeated byte for byte (the remembered-result path).
'use strict';

const path = require('node:path');
const sig = require(path.resolve(__dirname, '..', '..', 'dist', 's3', 'sigv4'));
const { canonicalRequest, stringToSign, formatAmzDate } = require(path.resolve(__dirname, '..', '..', 'dist', 's3', 'sigv4', 'canonical'));
const { hmac, deriveSigningKey } = require(path.resolve(__dirname, '..', '..', 'dist', 's3', 'sigv4', 'signing-key'));

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
let t = process.hrtime.bigint();
for (const r of fresh) v.verify(r, now);
const freshUs = Number(process.hrtime.bigint() - t) / 1e3 / N;
// A presigned URL repeated byte for byte, as the server passes it (raw query included).
const u = new URL(sig.presignUrl('GET', new URL('http://127.0.0.1:9000/bucket/object'), { accessKeyId: 'A', secretAccessKey: 'S' }, 'us-east-1', new sig.SigningKeyCache(), 3600, now));
const rawQuery = u.search.slice(1);
const same = { method: 'GET', rawPath: u.pathname, query: sig.parseQuery(rawQuery), rawQuery, headers: new Map([['host', u.host]]) };
v.verify(same, now);
t = process.hrtime.bigint();
for (let i = 0; i < N; i++) v.verify(same, now);
const sameUs = Number(process.hrtime.bigint() - t) / 1e3 / N;
process.stdout.write(`SigV4 verify: ${freshUs.toFixed(1)} µs per new header signature, ${sameUs.toFixed(1)} µs per repeated presigned URL\n`);
