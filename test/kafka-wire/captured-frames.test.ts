/**
 * Request frames captured from real clients (kafkajs 2.2.4 and kcat 1.7.1 / librdkafka 2.0.2,
 * by scripts/kafka-codegen/capture-frames.js) decode with the generated codecs, consume every
 * byte, and re-encode to the very same bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ApiVersionsRequest } from '../../src/kafka-wire/messages/api-versions';
import { type FetchRequest } from '../../src/kafka-wire/messages/fetch';
import { decodeRequestHeader, encodeRequestHeader } from '../../src/kafka-wire/messages/header';
import { kafkaApi, requestHeaderVersion } from '../../src/kafka-wire/messages/index';
import { type MetadataRequest } from '../../src/kafka-wire/messages/metadata';
import { type ProduceRequest } from '../../src/kafka-wire/messages/produce';
import { type SaslAuthenticateRequest } from '../../src/kafka-wire/messages/sasl-authenticate';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { codecOf, moduleFile } from './codecs';

const FIXTURES = path.join(__dirname, 'fixtures');
const names = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.hex')).map((f) => f.slice(0, -4)).sort();

function frame(name: string): Buffer {
  return Buffer.from(fs.readFileSync(path.join(FIXTURES, `${name}.hex`), 'utf8').replace(/\s+/g, ''), 'hex');
}

interface Decoded {
  clientId: string | null | undefined;
  body: Record<string, unknown>;
}

/** Decode a whole frame (size, header, body) and check it re-encodes to the same bytes. */
function decodeFrame(name: string): Decoded {
  const bytes = frame(name);
  expect(bytes.readInt32BE(0)).toBe(bytes.length - 4);
  const api = kafkaApi(bytes.readInt16BE(4));
  if (api === undefined) throw new Error(`${name}: API key ${bytes.readInt16BE(4)} is not served`);
  const version = bytes.readInt16BE(6);
  expect(name).toMatch(new RegExp(`^(kafkajs|kcat)-${moduleFile(api.name)}-v${version}$`));

  const r = new Reader(bytes, 4);
  const headerVersion = requestHeaderVersion(api, version);
  const header = decodeRequestHeader(r, headerVersion);
  const codec = codecOf(api, 'Request');
  const body = codec.decode(r, version);
  expect(r.remaining).toBe(0);

  const w = new Writer();
  encodeRequestHeader(w, header, headerVersion);
  codec.encode(w, body, version);
  expect(w.toBuffer().toString('hex')).toBe(bytes.subarray(4).toString('hex'));
  return { clientId: header.clientId, body };
}

test('the fixtures include ApiVersions, Metadata, Produce and Fetch from both clients', () => {
  for (const client of ['kafkajs', 'kcat']) {
    for (const api of ['api-versions', 'metadata', 'produce', 'fetch']) {
      expect(names.some((n) => n.startsWith(`${client}-${api}-v`))).toBe(true);
    }
  }
});

test.each(names)('%s decodes, consumes every byte and re-encodes identically', (name) => {
  decodeFrame(name);
});

describe('what the clients sent', () => {
  test('librdkafka names itself in ApiVersions v3 (flexible, request header v2)', () => {
    const { clientId, body } = decodeFrame('kcat-api-versions-v3');
    const req = body as unknown as ApiVersionsRequest;
    expect(clientId).toBe('rdkafka');
    expect(req).toEqual({ clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' });
  });

  test('kafkajs first asks for every topic (null) in Metadata v6, without auto-creation', () => {
    const { clientId, body } = decodeFrame('kafkajs-metadata-v6');
    const req = body as unknown as MetadataRequest;
    expect(clientId).toBe('svc-capture');
    expect(req).toEqual({ topics: null, allowAutoTopicCreation: false });
  });

  test.each(['kafkajs-produce-v7', 'kcat-produce-v7'])('%s carries a RecordBatch v2 as opaque bytes', (name) => {
    const req = decodeFrame(name).body as unknown as ProduceRequest;
    const records = req.topicData[0]!.partitionData[0]!.records!;
    expect(req.topicData[0]!.name).toBe('capture-topic');
    expect(records.readInt8(16)).toBe(2); // magic
    expect(records.readInt32BE(8) + 12).toBe(records.length); // batchLength covers the rest
  });

  test.each(['kafkajs-fetch-v11', 'kcat-fetch-v11'])('%s fetches the captured topic by name', (name) => {
    const req = decodeFrame(name).body as unknown as FetchRequest;
    expect(req.topics.map((t) => t.topic)).toEqual(['capture-topic']);
    expect(req.topics[0]!.partitions[0]!.partition).toBe(0);
  });

  test.each(['kafkajs-sasl-authenticate-v1', 'kcat-sasl-authenticate-v0'])('%s sends PLAIN as authzid NUL user NUL password', (name) => {
    const req = decodeFrame(name).body as unknown as SaslAuthenticateRequest;
    expect(req.authBytes.toString('utf8')).toBe('\0svc\0svc-secret');
  });
});
