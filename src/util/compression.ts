/**
 * Kafka's record-batch codecs (attribute bits 0–2): the one file that imports the compression
 * libraries. Kafka Produce stores compressed batches as sent; reads in the other formats (HTTP
 * JSON/raw/binary, Durable Streams) decompress them here (render/inflate-batch.ts).
 *
 * - gzip: node:zlib.
 * - snappy: Kafka producers (librdkafka, the Java client) write xerial framing: the magic
 *   `82 53 4E 41 50 50 59 00`, int32 version, int32 compatible version, then [int32 length][snappy
 *   block] chunks; others (kafkajs' plugin, @platformatic/kafka) write one raw block. Both are read.
 * - lz4: the LZ4 *frame* format (magic 04 22 4D 18), as every v2 batch carries it.
 * - zstd: one or more zstd frames; librdkafka streams them, so the content size may be unknown.
 *   WebAssembly (no compiler, nothing downloaded at install): `ready()` must resolve before use.
 *
 * Every codec refuses to produce more than MAX_INFLATED_BYTES (a small batch must not inflate
 * into gigabytes): gzip and zstd by an output limit, snappy and lz4 from the sizes their formats
 * declare before anything is decoded.
 */
import * as zlib from 'node:zlib';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import * as zstd from '@bokuweb/zstd-wasm';
import { Compression } from './record-batch';

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** magic, version, compatible version. */
const XERIAL_HEADER = 16;
/** Uncompressed bytes per xerial chunk when compressing (what the Java client uses). */
const XERIAL_BLOCK = 32 * 1024; // 32 KiB
/** Decompressed batches larger than this are refused (a decompression bomb cannot exhaust memory). */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024; // 256 MiB

let zstdReady: Promise<void> | null = null;
let zstdLoaded = false;

/** Load the zstd WebAssembly module (once); every other codec is ready at import. */
export function ready(): Promise<void> {
  zstdReady ??= zstd.init().then(() => {
    zstdLoaded = true;
  });
  return zstdReady;
}

export class CompressionError extends Error {
  override readonly name = 'CompressionError';
}

/** The uncompressed bytes of a batch's records section compressed with `codec`. */
export function decompress(codec: number, data: Buffer): Buffer {
  try {
    switch (codec) {
      case Compression.gzip:
        return zlib.gunzipSync(data, { maxOutputLength: MAX_INFLATED_BYTES });
      case Compression.snappy:
        return unsnappy(data);
      case Compression.lz4:
        checkLz4Bound(data);
        return lz4.decompressFrameSync(data);
      case Compression.zstd:
        return unzstd(data);
      default:
        throw new CompressionError(`compression codec ${codec} is not one of Kafka's (1 gzip, 2 snappy, 3 lz4, 4 zstd)`);
    }
  } catch (err) {
    if (err instanceof CompressionError) throw err;
    throw new CompressionError(`codec ${codec}: ${(err as Error).message}`);
  }
}

/** Compress a records section with `codec` (snappy with xerial framing, as Kafka producers write it). */
export function compress(codec: number, data: Buffer): Buffer {
  switch (codec) {
    case Compression.gzip:
      return zlib.gzipSync(data);
    case Compression.snappy: {
      const parts: Buffer[] = [XERIAL_MAGIC, int32(1), int32(1)];
      for (let off = 0; off < data.length; off += XERIAL_BLOCK) {
        const block = snappy.compressSync(data.subarray(off, off + XERIAL_BLOCK));
        parts.push(int32(block.length), block);
      }
      return Buffer.concat(parts);
    }
    case Compression.lz4:
      return lz4.compressFrameSync(data);
    case Compression.zstd:
      if (!zstdLoaded) throw new CompressionError('zstd is not loaded yet (await ready())');
      return Buffer.from(zstd.compress(data, 3));
    default:
      throw new CompressionError(`compression codec ${codec} is not one of Kafka's`);
  }
}

function int32(v: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(v, 0);
  return b;
}

/** A snappy block starts with its uncompressed length (an unsigned varint): refuse a bomb before inflating it. */
function snappyBlock(block: Buffer, budget: number): Buffer {
  let len = 0;
  for (let i = 0, mul = 1; i < 5 && i < block.length; i++, mul *= 128) {
    len += (block[i]! & 0x7f) * mul;
    if ((block[i]! & 0x80) === 0) break;
  }
  if (len > budget) throw new CompressionError(`snappy: a block of ${len} bytes exceeds ${MAX_INFLATED_BYTES} bytes decompressed`);
  return snappy.uncompressSync(block, { asBuffer: true }) as Buffer;
}

/**
 * The LZ4 frame format bounds its output before decoding: each block holds at most the frame's
 * block maximum size (64 KiB–4 MiB, in the BD byte), so blocks × maximum is checked against
 * MAX_INFLATED_BYTES first (lz4-napi has no output limit of its own).
 */
function checkLz4Bound(data: Buffer): void {
  if (data.length < 7 || data.readUInt32LE(0) !== 0x184d2204) throw new CompressionError('lz4: not an LZ4 frame');
  const flg = data[4]!;
  const blockMax = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20][(data[5]! >> 4) & 7]!;
  if (blockMax === 0) throw new CompressionError('lz4: invalid block maximum size');
  let pos = 6 + ((flg & 0x08) !== 0 ? 8 : 0) + ((flg & 0x01) !== 0 ? 4 : 0) + 1;
  const blockChecksum = (flg & 0x10) !== 0 ? 4 : 0;
  let blocks = 0;
  while (pos + 4 <= data.length) {
    const size = data.readUInt32LE(pos) & 0x7fff_ffff;
    pos += 4;
    if (size === 0) return;
    pos += size + blockChecksum;
    if (++blocks * blockMax > MAX_INFLATED_BYTES) throw new CompressionError(`lz4: more than ${MAX_INFLATED_BYTES} bytes decompressed`);
  }
  throw new CompressionError('lz4: truncated frame');
}

function unsnappy(data: Buffer): Buffer {
  if (data.length < XERIAL_HEADER || !data.subarray(0, 8).equals(XERIAL_MAGIC)) return snappyBlock(data, MAX_INFLATED_BYTES);
  const parts: Buffer[] = [];
  let total = 0;
  for (let off = XERIAL_HEADER; off < data.length; ) {
    if (off + 4 > data.length) throw new CompressionError('snappy: truncated xerial chunk length');
    const len = data.readInt32BE(off);
    off += 4;
    if (len < 0 || off + len > data.length) throw new CompressionError('snappy: xerial chunk runs past the end of the batch');
    const block = snappyBlock(data.subarray(off, off + len), MAX_INFLATED_BYTES - total);
    total += block.length;
    parts.push(block);
    off += len;
  }
  return Buffer.concat(parts, total);
}

function unzstd(data: Buffer): Buffer {
  if (!zstdLoaded) throw new CompressionError('zstd is not loaded yet (await ready())');
  // The frame may not carry its content size (streamed): grow the output bound until it fits.
  for (let bound = Math.max(1024 * 1024, data.length * 8); ; bound *= 4) {
    try {
      return Buffer.from(zstd.decompress(data, { defaultHeapSize: Math.min(bound, MAX_INFLATED_BYTES) }));
    } catch (err) {
      if (bound >= MAX_INFLATED_BYTES) throw err;
    }
  }
}
