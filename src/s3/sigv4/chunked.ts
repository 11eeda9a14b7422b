/**
 * Decodes `Content-Encoding: aws-chunked` request bodies on their way to the origin, which
 * gets the plain bytes under UNSIGNED-PAYLOAD. Framing:
 *   <hex-size>[;chunk-signature=<sig>]\r\n<data>\r\n ... 0[;chunk-signature=<sig>]\r\n[<trailers>]\r\n
 * Variants (x-amz-content-sha256): STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] (every chunk
 * signature checked, chained from the seed signature), STREAMING-UNSIGNED-PAYLOAD-TRAILER
 * (the SDK v3 default for streamed bodies, with a checksum trailer).
 *
 * Why data is held back by one chunk: a chunk is passed on only once the next chunk header
 * arrives, and the last one only after the final chunk and trailer are checked. Otherwise
 * the origin could receive its full Content-Length (a complete upload) before a bad last
 * chunk signature or checksum is noticed; failing here destroys the origin request instead.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';
import { crc32c } from '../../util/crc32c';
import { S3Error } from '../errors';
import { EMPTY_SHA256, hmac, sha256Hex } from './signing-key';

export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

/** Largest chunk accepted; held chunks are bounded by twice this. */
const MAX_CHUNK = 64 * 1024 * 1024; // 64 MiB
const MAX_LINE = 4096;

export interface ChunkSigning {
  signingKey: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export interface ChunkedOptions {
  /** Present when chunk signatures must be verified. */
  signing?: ChunkSigning | undefined;
  /** x-amz-decoded-content-length, checked at the end. */
  decodedLength?: number | undefined;
  /** Lower-case names announced in x-amz-trailer. */
  trailers?: readonly string[] | undefined;
}

type State = 'header' | 'data' | 'data-crlf' | 'trailer' | 'done';

/** Checksum of the decoded body for the announced trailer, when we know the algorithm. */
function checksumFor(name: string): { update(b: Buffer): void; digest(): string } | undefined {
  switch (name) {
    case 'x-amz-checksum-crc32': {
      let c = 0;
      return { update: (b) => void (c = zlib.crc32(b, c)), digest: () => u32(c) };
    }
    case 'x-amz-checksum-crc32c': {
      let c = 0;
      return { update: (b) => void (c = crc32c(b, c)), digest: () => u32(c) };
    }
    case 'x-amz-checksum-sha1':
    case 'x-amz-checksum-sha256': {
      const h: Hash = createHash(name.endsWith('sha1') ? 'sha1' : 'sha256');
      return { update: (b) => void h.update(b), digest: () => h.digest('base64') };
    }
    default:
      return undefined;
  }
}

function u32(n: number): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b.toString('base64');
}

export class AwsChunkedDecoder extends Transform {
  readonly #signing: ChunkSigning | undefined;
  readonly #decodedLength: number | undefined;
  readonly #checksums = new Map<string, { update(b: Buffer): void; digest(): string }>();
  #state: State = 'header';
  #line = '';
  #remaining = 0;
  #chunkSig = '';
  #prevSig: string;
  #hash: Hash | undefined;
  #current: Buffer[] = [];
  #held: Buffer[] = [];
  #total = 0;
  #trailerLines: string[] = [];

  constructor(o: ChunkedOptions) {
    super();
    this.#signing = o.signing;
    this.#prevSig = o.signing?.seedSignature ?? '';
    this.#decodedLength = o.decodedLength;
    for (const t of o.trailers ?? []) {
      const c = checksumFor(t);
      if (c) this.#checksums.set(t, c);
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      this.#feed(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    if (this.#state !== 'done') return cb(new S3Error('IncompleteBody', 'The request body ended before the final aws-chunked chunk'));
    cb();
  }

  #feed(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      switch (this.#state) {
        case 'header':
        case 'trailer': {
          const nl = buf.indexOf(0x0a, i);
          const end = nl < 0 ? buf.length : nl + 1;
          this.#line += buf.toString('latin1', i, end);
          i = end;
          if (this.#line.length > MAX_LINE) throw new S3Error('InvalidRequest', 'aws-chunked framing line too long');
          if (nl < 0) break;
          const line = this.#line.replace(/\r?\n$/, '');
          this.#line = '';
          if (this.#state === 'header') this.#header(line);
          else this.#trailer(line);
          break;
        }
        case 'data': {
          const n = Math.min(this.#remaining, buf.length - i);
          const part = buf.subarray(i, i + n);
          this.#hash?.update(part);
          for (const c of this.#checksums.values()) c.update(part);
          this.#current.push(part);
          this.#remaining -= n;
          i += n;
          if (this.#remaining === 0) {
            this.#endChunk();
            this.#state = 'data-crlf';
            this.#line = '';
          }
          break;
        }
        case 'data-crlf': {
          // The two bytes after the data; tolerated split across reads.
          this.#line += buf.toString('latin1', i, i + 1);
          i += 1;
          if (this.#line === '\r\n' || this.#line === '\n') {
            this.#line = '';
            this.#state = 'header';
          } else if (this.#line !== '\r') throw new S3Error('InvalidRequest', 'aws-chunked chunk data is not followed by CRLF');
          break;
        }
        case 'done':
          if (buf.subarray(i).toString('latin1').trim() !== '') throw new S3Error('InvalidRequest', 'data after the final aws-chunked chunk');
          i = buf.length;
          break;
      }
    }
  }

  #header(line: string): void {
    const [sizeHex, ...ext] = line.split(';');
    if (!/^[0-9a-fA-F]{1,16}$/.test(sizeHex ?? '')) throw new S3Error('InvalidRequest', 'malformed aws-chunked chunk header');
    const size = parseInt(sizeHex!, 16);
    if (size > MAX_CHUNK) throw new S3Error('InvalidRequest', 'aws-chunked chunk too large');
    this.#chunkSig = '';
    for (const e of ext) if (e.startsWith('chunk-signature=')) this.#chunkSig = e.slice('chunk-signature='.length);
    if (this.#signing && this.#chunkSig === '') throw new S3Error('SignatureDoesNotMatch', 'aws-chunked chunk without chunk-signature');
    // The chunk before a non-empty one is known not to be the last: pass it on.
    if (size > 0) this.#release();
    this.#hash = this.#signing ? createHash('sha256') : undefined;
    if (size === 0) {
      this.#endChunk();
      this.#state = 'trailer';
      return;
    }
    this.#remaining = size;
    this.#state = 'data';
  }

  #endChunk(): void {
    if (this.#signing) {
      const s = this.#signing;
      const dataHash = this.#hash!.digest('hex');
      const sts = `AWS4-HMAC-SHA256-PAYLOAD\n${s.amzDate}\n${s.scope}\n${this.#prevSig}\n${EMPTY_SHA256}\n${dataHash}`;
      const expected = hmac(s.signingKey, sts).toString('hex');
      if (expected !== this.#chunkSig) throw new S3Error('SignatureDoesNotMatch', 'The chunk signature we calculated does not match the signature you provided.');
      this.#prevSig = expected;
    }
    for (const b of this.#current) this.#total += b.length;
    this.#held.push(...this.#current);
    this.#current = [];
  }

  #release(): void {
    for (const b of this.#held) this.push(b);
    this.#held = [];
  }

  #trailer(line: string): void {
    if (line !== '') {
      this.#trailerLines.push(line);
      return;
    }
    // Empty line: end of the trailer section.
    const values = new Map<string, string>();
    let trailerSig: string | undefined;
    let canonical = '';
    for (const l of this.#trailerLines) {
      const c = l.indexOf(':');
      if (c < 0) throw new S3Error('InvalidRequest', 'malformed aws-chunked trailer');
      const name = l.slice(0, c).trim().toLowerCase();
      const value = l.slice(c + 1).trim();
      if (name === 'x-amz-trailer-signature') trailerSig = value;
      else {
        values.set(name, value);
        canonical += `${name}:${value}\n`;
      }
    }
    if (this.#signing && trailerSig !== undefined) {
      const s = this.#signing;
      const sts = `AWS4-HMAC-SHA256-TRAILER\n${s.amzDate}\n${s.scope}\n${this.#prevSig}\n${sha256Hex(canonical)}`;
      if (hmac(s.signingKey, sts).toString('hex') !== trailerSig) throw new S3Error('SignatureDoesNotMatch', 'The trailer signature we calculated does not match the signature you provided.');
    }
    for (const [name, c] of this.#checksums) {
      const got = values.get(name);
      if (got !== undefined && got !== c.digest()) throw new S3Error('BadDigest', `The ${name.slice('x-amz-checksum-'.length).toUpperCase()} you specified did not match the calculated checksum.`);
    }
    if (this.#decodedLength !== undefined && this.#total !== this.#decodedLength)
      throw new S3Error('IncompleteBody', `The decoded body has ${this.#total} bytes; x-amz-decoded-content-length says ${this.#decodedLength}`);
    this.#state = 'done';
    this.#release();
  }
}
