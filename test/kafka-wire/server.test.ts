/**
 * The Kafka listener's sockets (src/kafka-wire/server.ts) with a stand-in handler: every accepted
 * socket is served through a duplicate of its descriptor that reads in place (into the frame being
 * received, or a scratch buffer), and a connection's reads pause while its queued requests hold
 * 4 MiB.
 */
import * as crypto from 'node:crypto';
import * as net from 'node:net';
import { type KafkaServerHandle, listenKafka } from '../../src/kafka-wire/server';
import { FramePool } from '../../src/kafka-wire/frame-assembler';
import { createLogger } from '../../src/log';

const log = createLogger('error');

/** A size-prefixed frame of `size` bytes, its content from `seed`. */
function frame(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(4 + size);
  b.writeInt32BE(size, 0);
  for (let i = 4; i < b.length; i++) b[i] = (seed * 131 + i * 7) & 0xff;
  return b;
}

const digest = (b: Buffer): string => crypto.createHash('sha1').update(b).digest('hex');

/** A response frame: the digest of the request frame, size-prefixed. */
function answer(f: Buffer): Buffer {
  const body = Buffer.from(digest(f));
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/** Connect, write `data` in chunks of the given sizes (cycled), and collect `count` responses (40-byte digests). */
function exchange(port: number, data: Buffer, chunks: number[], count: number, onSocket?: (s: net.Socket) => void): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const got: string[] = [];
    let pending = Buffer.alloc(0);
    const socket = net.connect(port, '127.0.0.1', () => {
      let at = 0;
      let k = 0;
      while (at < data.length) {
        const n = chunks[k++ % chunks.length]!;
        socket.write(data.subarray(at, at + n));
        at += n;
      }
    });
    socket.on('data', (d: Buffer) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const n = pending.readInt32BE(0);
        got.push(pending.subarray(4, 4 + n).toString());
        pending = pending.subarray(4 + n);
      }
      if (got.length === count) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    onSocket?.(socket);
  });
}

/** A listener on a free loopback port (frames up to 4 MiB, a frame pool of its own) whose requests go to `handle`. */
function listen(handle: (frame: Buffer) => Promise<Buffer>): Promise<KafkaServerHandle> {
  return listenKafka({ host: '127.0.0.1', port: 0, maxFrameBytes: 4 << 20, framePool: new FramePool(), log, handle });
}

describe('Kafka listener sockets', () => {
  let server: KafkaServerHandle | null = null;
  afterEach(async () => {
    await server?.close(100);
    server = null;
  });

  test('small and large frames, written in chunks of every size, reach the handler intact and in order', async () => {
    const sizes = [10, 70_000, 5, 1_000_000, 65_536, 300, 3_000_000, 1, 200_000, 64];
    const frames = sizes.map((s, i) => frame(s, i + 1));
    const seen: string[] = [];
    server = await listen((f) => {
      seen.push(digest(f));
      return Promise.resolve(answer(f));
    });
    const want = frames.map((f) => digest(f.subarray(4)));
    const all = Buffer.concat(frames);
    for (const chunks of [[all.length], [1, 7, 4093], [65_536], [100_001, 3]]) {
      seen.length = 0;
      expect(await exchange(server.port, all, chunks, frames.length)).toEqual(want);
      expect(seen).toEqual(want);
    }
  });

  test('a connection whose handler stalls stops being read, then takes the rest of its pipelined frames in order', async () => {
    let release: (() => void) | null = null;
    const stalled = new Promise<void>((r) => (release = r));
    let handled = 0;
    server = await listen(async (f) => {
      if (handled++ === 0) await stalled;
      return answer(f);
    });
    // 48 MiB: more than the 4 MiB queue, the frame being read and both sockets' kernel buffers.
    const frames = Array.from({ length: 48 }, (_, i) => frame(1 << 20, i + 100));
    let client: net.Socket | null = null;
    const done = exchange(server.port, Buffer.concat(frames), [256 * 1024], frames.length, (s) => (client = s));
    await new Promise((r) => setTimeout(r, 1000));
    // One request runs (stalled); the others wait, queued or unread: the client still holds what the listener did not read.
    expect(handled).toBe(1);
    expect(client!.writableLength).toBeGreaterThan(8 << 20);
    release!();
    expect(await done).toEqual(frames.map((f) => digest(f.subarray(4))));
    expect(handled).toBe(frames.length);
  });

  test('a client that hangs up still gets the Produce requests it sent in full run, in order; its other requests are dropped', async () => {
    // acks=0: the client counted these delivered once written (kcat writes and exits at once).
    const PRODUCE = 0;
    const seen: Array<[number, number]> = [];
    let ended = 0;
    let hungUp: () => void = () => undefined;
    const gone = new Promise<void>((r) => (hungUp = r));
    server = await listenKafka({
      host: '127.0.0.1', port: 0, maxFrameBytes: 4 << 20, framePool: new FramePool(), log,
      async handle(f) {
        seen.push([f.readInt16BE(0), f.readInt32BE(4)]);
        // The first request is still running when the client's close arrives.
        if (seen.length === 1) await gone;
        return null;
      },
      closed: () => ended++,
    });
    // [api key][version][correlation id]: Produce, Metadata, Produce, Fetch, Produce.
    const keys = [PRODUCE, 3, PRODUCE, 1, PRODUCE];
    const frames = keys.map((key, i) => {
      const b = Buffer.alloc(4 + 8 + 16);
      b.writeInt32BE(b.length - 4, 0);
      b.writeInt16BE(key, 4);
      b.writeInt32BE(i, 8);
      return b;
    });
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.end(Buffer.concat(frames));
    await new Promise<void>((r) => socket.once('close', () => r()));
    // The listener sees the close while the first request runs.
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual([[PRODUCE, 0]]);
    expect(ended).toBe(0);
    hungUp();
    const until = Date.now() + 5_000;
    while (ended === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([[PRODUCE, 0], [PRODUCE, 2], [PRODUCE, 4]]);
    // Said once the last of them ran: a gateway thread's main thread drops the connection's state only then.
    expect(ended).toBe(1);
    expect(server.connections()).toBe(0);
  });
});
