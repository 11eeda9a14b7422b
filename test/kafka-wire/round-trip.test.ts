/**
 * Every advertised version of every API, request and response: a value with every field of
 * the version populated (tagged fields included), and one with every nullable field null, is
 * encoded, decoded back to the same value, and re-encoded to the same bytes. The values are
 * built from the schema summaries in scripts/kafka-codegen/spec/, independently of the
 * generated code.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeApiVersionsRequest, decodeApiVersionsRequest } from '../../src/kafka-wire/messages/api-versions';
import { decodeFetchRequest, encodeFetchRequest, type FetchRequest } from '../../src/kafka-wire/messages/fetch';
import { kafkaApi, requestHeaderVersion, responseHeaderVersion } from '../../src/kafka-wire/messages/index';
import { encodeMetadataRequest } from '../../src/kafka-wire/messages/metadata';
import { encodeProduceRequest } from '../../src/kafka-wire/messages/produce';
import { KafkaProtocolError, UnsupportedVersionError } from '../../src/kafka-wire/protocol/errors';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { codecOf, type Direction, everyVersion, KAFKA_APIS, moduleFile } from './codecs';

interface SpecField {
  name: string;
  type: string;
  versions: [number, number];
  nullable?: [number, number];
  tag?: number;
  fields?: SpecField[];
}

interface SpecMessage {
  flexible: number | null;
  fields: SpecField[];
}

interface Spec {
  name: string;
  apiKey: number;
  versions: [number, number];
  request: SpecMessage;
  response: SpecMessage;
}

const SPEC_DIR = path.join(__dirname, '..', '..', 'scripts', 'kafka-codegen', 'spec');

function specOf(apiName: string): Spec {
  return JSON.parse(fs.readFileSync(path.join(SPEC_DIR, `${moduleFile(apiName)}.json`), 'utf8')) as Spec;
}

const within = (v: number, [lo, hi]: [number, number]): boolean => v >= lo && v <= hi;
const camel = (name: string): string => name.charAt(0).toLowerCase() + name.slice(1);

type Mode = 'populated' | 'nulls';

/** A distinct value per field (`seed`), so a field decoded into the wrong property shows. */
function primitive(type: string, seed: number): unknown {
  switch (type) {
    case 'bool':
      return seed % 2 === 0;
    case 'int8':
      return -1 - (seed % 100);
    case 'int16':
      return -1000 - seed;
    case 'uint16':
      return 60000 + seed;
    case 'int32':
      return seed % 2 === 0 ? 100_000 + seed : -100_000 - seed;
    case 'uint32':
      return 4_000_000_000 + seed;
    case 'int64':
      return -(1n << 40n) - BigInt(seed);
    case 'float64':
      return seed + 0.25;
    case 'string':
      // Every third string is long enough (> 127 bytes) to widen a tagged field's size varint.
      return seed % 3 === 0 ? `s${seed}-é😀-${'x'.repeat(150)}` : `s${seed}-é😀`;
    case 'bytes':
      return Buffer.from([seed & 0xff, 1, 2, 3]);
    case 'records':
      return Buffer.alloc(70, seed & 0xff);
    case 'uuid': {
      const h = (seed * 2654435761 >>> 0).toString(16).padStart(8, '0');
      return `${h}-0000-4000-8000-${h}${h.slice(0, 4)}`;
    }
    default:
      throw new Error(`no sample for ${type}`);
  }
}

/** A value of `fields` for `version`: every field of the version set, per `mode`. */
function sample(fields: SpecField[], version: number, mode: Mode, seed: { n: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!within(version, f.versions)) continue;
    seed.n++;
    const nullable = f.nullable !== undefined && within(version, f.nullable);
    if (mode === 'nulls' && nullable) {
      out[camel(f.name)] = null;
      continue;
    }
    if (mode === 'nulls' && f.tag !== undefined) continue; // an absent tagged field
    const elem = f.type.replace(/^\[\]/, '');
    const one = (): unknown => (f.fields !== undefined ? sample(f.fields, version, mode, seed) : primitive(elem, seed.n++));
    out[camel(f.name)] = f.type.startsWith('[]') ? Array.from({ length: mode === 'populated' ? 2 : 1 }, one) : one();
  }
  return out;
}

function encode(codec: ReturnType<typeof codecOf>, value: Record<string, unknown>, version: number): Buffer {
  const w = new Writer(64);
  codec.encode(w, value, version);
  return Buffer.from(w.toBuffer());
}

describe.each(['Request', 'Response'] as Direction[])('%s round trips over every advertised version', (direction) => {
  test.each(everyVersion())('%s', (_label, api, version) => {
    const spec = specOf(api.name);
    const message = direction === 'Request' ? spec.request : spec.response;
    const codec = codecOf(api, direction);
    for (const mode of ['populated', 'nulls'] as Mode[]) {
      const value = sample(message.fields, version, mode, { n: 0 });
      const bytes = encode(codec, value, version);
      const r = new Reader(bytes);
      const decoded = codec.decode(r, version);
      expect(r.remaining).toBe(0);
      expect(decoded).toEqual(value);
      expect(encode(codec, decoded, version)).toEqual(bytes);
    }
  });
});

describe('the API table', () => {
  test('advertises the versions of design/kafka.md', () => {
    const table = Object.fromEntries(KAFKA_APIS.map((a) => [a.apiKey, `${a.name} ${a.minVersion}-${a.maxVersion}`]));
    expect(table).toEqual({
      0: 'Produce 0-9',
      1: 'Fetch 4-13',
      2: 'ListOffsets 1-6',
      3: 'Metadata 0-12',
      8: 'OffsetCommit 2-9',
      9: 'OffsetFetch 1-9',
      10: 'FindCoordinator 0-4',
      11: 'JoinGroup 0-9',
      12: 'Heartbeat 0-4',
      13: 'LeaveGroup 0-5',
      14: 'SyncGroup 0-5',
      15: 'DescribeGroups 0-5',
      16: 'ListGroups 0-5',
      17: 'SaslHandshake 0-1',
      18: 'ApiVersions 0-3',
      19: 'CreateTopics 2-7',
      20: 'DeleteTopics 1-6',
      21: 'DeleteRecords 0-2',
      22: 'InitProducerId 0-4',
      24: 'AddPartitionsToTxn 0-3',
      25: 'AddOffsetsToTxn 0-3',
      26: 'EndTxn 0-3',
      28: 'TxnOffsetCommit 0-3',
      32: 'DescribeConfigs 0-4',
      33: 'AlterConfigs 0-2',
      36: 'SaslAuthenticate 0-2',
      37: 'CreatePartitions 0-3',
      42: 'DeleteGroups 0-2',
      44: 'IncrementalAlterConfigs 0-1',
      47: 'OffsetDelete 0-0',
      60: 'DescribeCluster 0-1',
      61: 'DescribeProducers 0-0',
      65: 'DescribeTransactions 0-0',
      66: 'ListTransactions 0-1',
      68: 'ConsumerGroupHeartbeat 0-1',
      69: 'ConsumerGroupDescribe 0-0',
      76: 'ShareGroupHeartbeat 0-0',
      77: 'ShareGroupDescribe 0-0',
      78: 'ShareFetch 0-0',
      79: 'ShareAcknowledge 0-0',
    });
  });

  test('flexible versions use request header v2 and response header v1, except ApiVersions responses (always v0)', () => {
    const api = (key: number) => kafkaApi(key)!;
    expect([requestHeaderVersion(api(0), 8), requestHeaderVersion(api(0), 9)]).toEqual([1, 2]);
    expect([responseHeaderVersion(api(0), 8), responseHeaderVersion(api(0), 9)]).toEqual([0, 1]);
    expect([requestHeaderVersion(api(18), 3), responseHeaderVersion(api(18), 3)]).toEqual([2, 0]);
    expect(requestHeaderVersion(api(17), 1)).toBe(1);
    expect(kafkaApi(4)).toBeUndefined();
  });
});

describe('version-dependent fields', () => {
  const fetchRequest: FetchRequest = {
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    topics: [{ topic: 'orders', topicId: '00000000-0000-4000-8000-000000000001', partitions: [{ partition: 0, fetchOffset: 42n, partitionMaxBytes: 1 << 20 }] }],
  };

  function fetchRoundTrip(v: FetchRequest, version: number): FetchRequest {
    const w = new Writer();
    encodeFetchRequest(w, v, version);
    return decodeFetchRequest(new Reader(w.toBuffer()), version);
  }

  test('a field the version lacks is not written and decodes as undefined', () => {
    const v4 = fetchRoundTrip(fetchRequest, 4);
    expect(v4.topics[0]!.topic).toBe('orders');
    expect(v4.topics[0]!.topicId).toBeUndefined();
    const v13 = fetchRoundTrip(fetchRequest, 13);
    expect(v13.topics[0]!.topic).toBeUndefined();
    expect(v13.topics[0]!.topicId).toBe('00000000-0000-4000-8000-000000000001');
  });

  test('an optional field left undefined is written with its schema default', () => {
    const v12 = fetchRoundTrip(fetchRequest, 12);
    expect(v12.sessionEpoch).toBe(-1);
    expect(v12.rackId).toBe('');
    expect(v12.topics[0]!.partitions[0]).toMatchObject({ currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n });
    expect(v12.clusterId).toBeUndefined(); // tagged and undefined: not written at all
  });

  test('a tagged field is written only when it has a value', () => {
    const sizeOf = (v: FetchRequest) => {
      const w = new Writer();
      encodeFetchRequest(w, v, 12);
      return w.length;
    };
    expect(sizeOf({ ...fetchRequest, clusterId: null }) - sizeOf(fetchRequest)).toBe(3); // tag 0, size 1, null (0)
    expect(fetchRoundTrip({ ...fetchRequest, clusterId: null }, 12).clusterId).toBeNull();
  });

  test('unknown tagged fields in a body are skipped', () => {
    const w = new Writer();
    encodeApiVersionsRequest(w, { clientSoftwareName: 'a', clientSoftwareVersion: 'b' }, 3);
    const bytes = Buffer.from(w.toBuffer());
    expect(bytes).toEqual(Buffer.from('0261026200', 'hex'));
    const withUnknown = Buffer.concat([bytes.subarray(0, -1), Buffer.from('0109020abc', 'hex')]);
    const r = new Reader(withUnknown);
    expect(decodeApiVersionsRequest(r, 3)).toEqual({ clientSoftwareName: 'a', clientSoftwareVersion: 'b' });
    expect(r.remaining).toBe(0);
  });

  test('a null in a version where the field is not nullable is refused', () => {
    const request = { topics: [{ name: null }], allowAutoTopicCreation: true };
    expect(() => encodeMetadataRequest(new Writer(), request, 9)).toThrow(KafkaProtocolError);
    expect(() => encodeMetadataRequest(new Writer(), request, 10)).not.toThrow();
  });

  test('versions outside the advertised range are refused both ways', () => {
    expect(() => encodeProduceRequest(new Writer(), { acks: 1, timeoutMs: 1, topicData: [] }, 10)).toThrow(UnsupportedVersionError);
    expect(() => decodeFetchRequest(new Reader(Buffer.alloc(64)), 3)).toThrow(/Fetch version 3 is not supported/);
  });

  test('a truncated body is a protocol error', () => {
    const w = new Writer();
    encodeFetchRequest(w, fetchRequest, 11);
    const bytes = w.toBuffer();
    expect(() => decodeFetchRequest(new Reader(bytes.subarray(0, bytes.length - 1)), 11)).toThrow(KafkaProtocolError);
  });
});
