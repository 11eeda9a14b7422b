/**
 * An independent SigV4 implementation (`@smithy/signature-v4`, the one inside AWS SDK v3)
 * used as an oracle: tests compare svc-cache's signer and verifier against it.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';

function bytes(d: string | ArrayBuffer | ArrayBufferView): string | Buffer {
  if (typeof d === 'string') return d;
  if (d instanceof ArrayBuffer) return Buffer.from(d);
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

/** The `Checksum` shape smithy wants, on node:crypto. */
class NodeSha256 {
  readonly #h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.#h.digest();
  }
  reset(): void {}
}

export function smithySigner(accessKeyId: string, secretAccessKey: string, region: string, sessionToken?: string): SignatureV4 {
  return new SignatureV4({
    credentials: sessionToken === undefined ? { accessKeyId, secretAccessKey } : { accessKeyId, secretAccessKey, sessionToken },
    region,
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: true,
  });
}
