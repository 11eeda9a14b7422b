/**
 * A minimal Kafka client built on the project's own codecs, for what the real clients cannot do
 * without consumer groups (a plain partition read) and for raw protocol checks.
 */
import * as net from 'node:net';
import { decodeFetchResponse, encodeFetchRequest } from '../../src/kafka-wire/messages/fetch';
import { decodeResponseHeader, encodeRequestHeader } from '../../src/kafka-wire/messages/header';
import { decodeSaslAuthenticateResponse, encodeSaslAuthenticateRequest } from '../../src/kafka-wire/messages/sasl-authenticate';
import { decodeSaslHandshakeResponse, encodeSaslHandshakeRequest } from '../../src/kafka-wire/messages/sasl-handshake';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { batchSize, decodeRecords } from '../../src/util/record-batch';

export interface FetchedRecord {
  offset: bigint;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string | null>;
}

interface Waiting {
  answer(frame: Buffer): void;
  fail(err: Error): void;
}

/** One connection; requests answered in order. A closed connection fails every request waiting and any made after. */
export class RawKafka {
  readonly #socket: net.Socket;
  #buf = Buffer.alloc(0);
  readonly #waiting: Waiting[] = [];
  #gone: Error | null = null;
  #correlation = 1;
  closed: Promise<void>;

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      while (this.#buf.length >= 4 && this.#buf.length >= 4 + this.#buf.readInt32BE(0)) {
        const size = this.#buf.readInt32BE(0);
        const frame = this.#buf.subarray(4, 4 + size);
        this.#buf = this.#buf.subarray(4 + size);
        this.#waiting.shift()?.answer(frame);
      }
    });
    socket.on('error', (err) => (this.#gone ??= err));
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.#gone ??= new Error('connection closed');
        for (const w of this.#waiting.splice(0)) w.fail(this.#gone);
        resolve();
      }),
    );
  }

  static connect(broker: string): Promise<RawKafka> {
    const [host, port] = broker.split(':') as [string, string];
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port: Number(port) }, () => resolve(new RawKafka(s)));
      s.once('error', reject);
    });
  }

  /** Send raw bytes (a whole frame, size prefix included). */
  write(bytes: Buffer): void {
    this.#socket.write(bytes);
  }

  /** Send a request (header v1 or v2 by `flexible`) and resolve with the response body reader (after the header). */
  request(apiKey: number, version: number, flexible: boolean, body: (w: Writer) => void, responseHeaderVersion = flexible ? 1 : 0): Promise<Reader> {
    const w = new Writer();
    const size = w.reserveInt32();
    const correlationId = this.#correlation++;
    encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId: 'svc-raw' }, flexible ? 2 : 1);
    body(w);
    w.int32At(size, w.length - 4);
    if (this.#gone !== null) return Promise.reject(this.#gone);
    this.#socket.write(Buffer.from(w.toBuffer()));
    return new Promise((resolve, reject) => {
      this.#waiting.push({
        answer: (frame) => {
          const r = new Reader(frame, 0);
          const h = decodeResponseHeader(r, responseHeaderVersion);
          if (h.correlationId !== correlationId) reject(new Error(`correlation id ${h.correlationId}, expected ${correlationId}`));
          else resolve(r);
        },
        fail: reject,
      });
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** SaslHandshake v1 for `mechanism`: its error code. */
export async function saslHandshake(k: RawKafka, mechanism: string): Promise<number> {
  return decodeSaslHandshakeResponse(await k.request(17, 1, false, (w) => encodeSaslHandshakeRequest(w, { mechanism }, 1)), 1).errorCode;
}

/** SaslAuthenticate v2 with a PLAIN message (username `svc`): its error code. */
export async function saslAuthenticate(k: RawKafka, password: string): Promise<number> {
  const authBytes = Buffer.from(`\0svc\0${password}`);
  return decodeSaslAuthenticateResponse(await k.request(36, 2, true, (w) => encodeSaslAuthenticateRequest(w, { authBytes }, 2)), 2).errorCode;
}

/** A new connection's SaslHandshake (PLAIN, which must be accepted) and SaslAuthenticate with `password`: the latter's error code. */
export async function saslPlainOnNewConnection(broker: string, password: string): Promise<number> {
  const k = await RawKafka.connect(broker);
  try {
    const handshake = await saslHandshake(k, 'PLAIN');
    if (handshake !== 0) throw new Error(`SaslHandshake PLAIN → error ${handshake}`);
    return await saslAuthenticate(k, password);
  } finally {
    k.close();
  }
}

/** Read partition `partition` of `topic` from `offset` up to its high watermark (Fetch v11), decoding uncompressed batches. */
export async function fetchAll(broker: string, topic: string, partition: number, offset: bigint): Promise<FetchedRecord[]> {
  const k = await RawKafka.connect(broker);
  const out: FetchedRecord[] = [];
  try {
    let next = offset;
    for (let round = 0; round < 100; round++) {
      const r = await k.request(1, 11, false, (w) =>
        encodeFetchRequest(w, {
          replicaId: -1, maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [], rackId: '',
        }, 11),
      );
      const res = decodeFetchResponse(r, 11);
      const p = res.responses[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode}`);
      const records = p.records ?? Buffer.alloc(0);
      for (let pos = 0; pos + 61 <= records.length; pos += batchSize(records, pos)) {
        for (const rec of decodeRecords(records, pos, Number(next))) {
          out.push({
            offset: BigInt(rec.offset),
            timestamp: rec.timestamp,
            key: rec.key === null ? null : rec.key.toString(),
            value: rec.value === null ? null : rec.value.toString(),
            headers: Object.fromEntries(rec.headers.map(([hk, hv]) => [hk.toString(), hv === null ? null : hv.toString()])),
          });
          next = BigInt(rec.offset) + 1n;
        }
      }
      if (next >= p.highWatermark) break;
    }
  } finally {
    k.close();
  }
  return out;
}
