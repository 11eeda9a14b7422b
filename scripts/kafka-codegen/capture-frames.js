#!/usr/bin/env node
'use strict';
/**
 * Records the request frames real Kafka clients send, as fixtures for
 * test/kafka-wire/captured-frames.test.ts:
 *
 *   kafkajs 2.2.4 ─┐                      ┌─ answers just enough (generated codecs, in memory)
 *                  ├─TCP─▶ throw-away broker on 127.0.0.1:0
 *   kcat (librdkafka) ┘                   └─ saves each (client, API, version) first seen as
 *                                            test/kafka-wire/fixtures/<client>-<api>-v<N>.hex
 *
 * Usage: node scripts/kafka-codegen/capture-frames.js [--out <dir>]
 * Needs kcat on PATH (Debian package `kcat`) and kafkajs (a devDependency). The fixtures are
 * committed; rerun this only to refresh them, e.g. after a client upgrade.
 *
 * The broker answers with the generated codecs (loaded through a transpile-only TypeScript
 * hook), so a capture run is also an end-to-end check of the codecs against the clients.
 */
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const TOPIC = 'capture-topic';
const GROUP = 'capture-group';
const SASL_USER = 'svc';
const SASL_PASSWORD = 'svc-secret';
/** Longest a client step may take before it is stopped (kcat) or abandoned (kafkajs). */
const STEP_TIMEOUT_MS = 30_000;

// ---- the generated codecs, through a transpile-only TypeScript hook -------------------------
const ts = require('typescript');
require.extensions['.ts'] = (module, filename) => {
  const out = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    fileName: filename,
  });
  module._compile(out.outputText, filename);
};
const wire = (p) => require(path.join(ROOT, 'src', 'kafka-wire', p));
const { Reader } = wire('protocol/reader.ts');
const { Writer } = wire('protocol/writer.ts');
const { KAFKA_APIS, kafkaApi, requestHeaderVersion, responseHeaderVersion } = wire('messages/index.ts');
const { decodeRequestHeader, encodeResponseHeader } = wire('messages/header.ts');

/** kebab-case module of an API name: "ListOffsets" → "list-offsets". */
const moduleOf = (name) => name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
const codecs = new Map(KAFKA_APIS.map((api) => [api.apiKey, wire(`messages/${moduleOf(api.name)}.ts`)]));

// ---- the in-memory broker state ---------------------------------------------------------------
/** topic → { id, batches: [{ base, count, bytes }], next } (one partition each). */
const topics = new Map();
const committed = new Map(); // "topic/partition" → offset

function topic(name) {
  let t = topics.get(name);
  if (t === undefined) {
    const h = crypto.createHash('sha256').update(name).digest('hex');
    t = { name, id: `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`, batches: [], next: 0n };
    topics.set(name, t);
  }
  return t;
}

/** Append the RecordBatch v2 batches in `records`, rewriting each base offset (bytes 0..8). */
function append(t, records) {
  let pos = 0;
  const base = t.next;
  while (records !== null && pos + 61 <= records.length) {
    const len = records.readInt32BE(pos + 8) + 12;
    const batch = Buffer.from(records.subarray(pos, pos + len));
    const count = BigInt(batch.readInt32BE(57));
    batch.writeBigInt64BE(t.next, 0);
    t.batches.push({ base: t.next, count, bytes: batch });
    t.next += count;
    pos += len;
  }
  return base;
}

function readFrom(t, offset) {
  return Buffer.concat(t.batches.filter((b) => b.base + b.count > offset).map((b) => b.bytes));
}

// ---- answers, per API --------------------------------------------------------------------------
let port = 0;
let memberSeq = 0;
const groupState = { members: new Map(), generation: 0, protocol: null, assignments: new Map() };

const handlers = {
  ApiVersions: () => ({ errorCode: 0, apiKeys: KAFKA_APIS.map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion })), throttleTimeMs: 0 }),
  Metadata: (req) => {
    const wanted = req.topics === null ? [...topics.keys()] : req.topics.map((t) => t.name ?? TOPIC);
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 0, host: '127.0.0.1', port, rack: null }],
      clusterId: 'capture-cluster',
      controllerId: 0,
      topics: wanted.map((name) => ({
        errorCode: 0,
        name,
        topicId: topic(name).id,
        isInternal: false,
        partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 0, leaderEpoch: 0, replicaNodes: [0], isrNodes: [0], offlineReplicas: [] }],
        topicAuthorizedOperations: -2147483648,
      })),
      clusterAuthorizedOperations: -2147483648,
    };
  },
  CreateTopics: (req) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({ name: t.name, topicId: topic(t.name).id, errorCode: 0, errorMessage: null, numPartitions: 1, replicationFactor: 1, configs: [] })),
  }),
  DeleteTopics: (req) => ({
    throttleTimeMs: 0,
    responses: (req.topicNames ?? req.topics.map((t) => t.name)).map((name) => {
      topics.delete(name);
      return { name, errorCode: 0, errorMessage: null };
    }),
  }),
  Produce: (req) => {
    if (req.acks === 0) {
      for (const t of req.topicData) for (const p of t.partitionData) append(topic(t.name), p.records);
      return null; // acks=0: no response at all
    }
    return {
      responses: req.topicData.map((t) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: 0, baseOffset: append(topic(t.name), p.records), logAppendTimeMs: -1n, logStartOffset: 0n })),
      })),
      throttleTimeMs: 0,
    };
  },
  Fetch: async (req, version) => {
    const byId = new Map([...topics.values()].map((t) => [t.id, t]));
    const responses = req.topics.map((ft) => {
      const t = version >= 13 ? byId.get(ft.topicId) : topic(ft.topic);
      return {
        topic: ft.topic,
        topicId: ft.topicId,
        partitions: ft.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode: 0,
          highWatermark: t.next,
          lastStableOffset: t.next,
          logStartOffset: 0n,
          abortedTransactions: null,
          preferredReadReplica: -1,
          // Empty, not null: librdkafka loops on a parse error otherwise (design/kafka.md).
          records: readFrom(t, p.fetchOffset),
        })),
      };
    });
    const empty = responses.every((r) => r.partitions.every((p) => p.records.length === 0));
    if (empty) await new Promise((resolve) => setTimeout(resolve, Math.min(req.maxWaitMs, 200)));
    return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses };
  },
  ListOffsets: (req) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0, timestamp: -1n, offset: p.timestamp === -2n ? 0n : topic(t.name).next, leaderEpoch: 0 })),
    })),
  }),
  FindCoordinator: (req) => ({
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    nodeId: 0,
    host: '127.0.0.1',
    port,
    coordinators: (req.coordinatorKeys ?? []).map((key) => ({ key, nodeId: 0, host: '127.0.0.1', port, errorCode: 0, errorMessage: null })),
  }),
  JoinGroup: (req) => {
    // Hand out a member id at once instead of MEMBER_ID_REQUIRED; all three clients accept it.
    const memberId = req.memberId !== '' ? req.memberId : `member-${++memberSeq}`;
    groupState.members.set(memberId, req.protocols[0].metadata);
    groupState.generation++;
    groupState.protocol = req.protocols[0].name;
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      generationId: groupState.generation,
      protocolType: req.protocolType,
      protocolName: groupState.protocol,
      leader: memberId,
      skipAssignment: false,
      memberId,
      members: [...groupState.members].map(([id, metadata]) => ({ memberId: id, groupInstanceId: null, metadata })),
    };
  },
  SyncGroup: (req) => {
    for (const a of req.assignments) groupState.assignments.set(a.memberId, a.assignment);
    return { throttleTimeMs: 0, errorCode: 0, protocolType: req.protocolType ?? 'consumer', protocolName: groupState.protocol, assignment: groupState.assignments.get(req.memberId) ?? Buffer.alloc(0) };
  },
  Heartbeat: () => ({ throttleTimeMs: 0, errorCode: 0 }),
  LeaveGroup: (req) => {
    groupState.members.clear();
    return { throttleTimeMs: 0, errorCode: 0, members: (req.members ?? []).map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: 0 })) };
  },
  OffsetCommit: (req) => ({
    throttleTimeMs: 0,
    topics: req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => {
        committed.set(`${t.name}/${p.partitionIndex}`, p.committedOffset);
        return { partitionIndex: p.partitionIndex, errorCode: 0 };
      }),
    })),
  }),
  OffsetFetch: (req) => {
    const partition = (name, i) => ({ partitionIndex: i, committedOffset: committed.get(`${name}/${i}`) ?? -1n, committedLeaderEpoch: -1, metadata: '', errorCode: 0 });
    const answerTopics = (ts) => (ts ?? [{ name: TOPIC, partitionIndexes: [0] }]).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((i) => partition(t.name, i)) }));
    return {
      throttleTimeMs: 0,
      topics: answerTopics(req.topics),
      errorCode: 0,
      groups: (req.groups ?? []).map((g) => ({ groupId: g.groupId, topics: answerTopics(g.topics), errorCode: 0 })),
    };
  },
  DescribeGroups: (req) => ({
    throttleTimeMs: 0,
    groups: req.groups.map((groupId) => ({ errorCode: 0, groupId, groupState: 'Empty', protocolType: 'consumer', protocolData: '', members: [], authorizedOperations: -2147483648 })),
  }),
  ListGroups: () => ({ throttleTimeMs: 0, errorCode: 0, groups: [{ groupId: GROUP, protocolType: 'consumer', groupState: 'Empty', groupType: 'classic' }] }),
  SaslHandshake: () => ({ errorCode: 0, mechanisms: ['PLAIN'] }),
  SaslAuthenticate: () => ({ errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n }),
  InitProducerId: () => ({ throttleTimeMs: 0, errorCode: 0, producerId: 1000n, producerEpoch: 0 }),
};

// ---- the listener ------------------------------------------------------------------------------
/** "kafkajs-produce-v7" → frame (Buffer), first seen wins. */
const captured = new Map();
let currentClient = 'unknown';

async function answer(socket, frame) {
  const r = new Reader(frame, 4);
  const apiKey = frame.readInt16BE(4);
  const version = frame.readInt16BE(6);
  const api = kafkaApi(apiKey);
  const name = `${currentClient}-${moduleOf(api === undefined ? `api${apiKey}` : api.name)}-v${version}`;
  if (!captured.has(name)) captured.set(name, Buffer.from(frame));
  if (api === undefined) throw new Error(`unexpected API key ${apiKey}`);
  const w = new Writer();
  const size = w.reserveInt32();
  if (apiKey === 18 && version > api.maxVersion) {
    // Unknown ApiVersions version: answer v0 with UNSUPPORTED_VERSION and the full table.
    const header = decodeRequestHeader(r, 1);
    encodeResponseHeader(w, { correlationId: header.correlationId }, 0);
    codecs.get(18).encodeApiVersionsResponse(w, { ...handlers.ApiVersions(), errorCode: 35 }, 0);
  } else {
    const header = decodeRequestHeader(r, requestHeaderVersion(api, version));
    const codec = codecs.get(apiKey);
    const request = codec[`decode${api.name}Request`](r, version);
    if (r.remaining !== 0) throw new Error(`${name}: ${r.remaining} bytes left after the body`);
    const response = await handlers[api.name](request, version);
    if (response === null) return;
    encodeResponseHeader(w, { correlationId: header.correlationId }, responseHeaderVersion(api, version));
    codec[`encode${api.name}Response`](w, response, version);
  }
  w.int32At(size, w.length - 4);
  socket.write(Buffer.from(w.toBuffer()));
}

/** Open client connections, closed at shutdown so the process can end. */
const sockets = new Set();

function serve(socket) {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  let pending = Buffer.alloc(0);
  let chain = Promise.resolve();
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const frame = pending.subarray(0, 4 + pending.readInt32BE(0));
      pending = pending.subarray(frame.length);
      // One request at a time per connection, in order, as a broker answers them.
      chain = chain.then(() => answer(socket, frame)).catch((err) => {
        console.error(`capture: ${err.stack}`);
        socket.destroy();
      });
    }
  });
  socket.on('error', () => {});
}

// ---- the clients -------------------------------------------------------------------------------
function kcat(args, stdin) {
  return new Promise((resolve) => {
    const child = spawn('kcat', ['-b', `127.0.0.1:${port}`, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), STEP_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) console.error(`capture: kcat ${args.join(' ')} exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      resolve();
    });
    child.stdin.end(stdin ?? '');
  });
}

async function withTimeout(what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out`)), STEP_TIMEOUT_MS)));
  try {
    await Promise.race([promise, timeout]);
  } catch (err) {
    console.error(`capture: ${what}: ${err.message}`);
  } finally {
    clearTimeout(timer);
  }
}

async function runKafkajs() {
  const { Kafka, logLevel, CompressionTypes } = require('kafkajs');
  const brokers = [`127.0.0.1:${port}`];
  const kafka = new Kafka({ clientId: 'svc-capture', brokers, logLevel: logLevel.NOTHING });

  const admin = kafka.admin();
  await withTimeout('kafkajs admin', (async () => {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.fetchTopicMetadata({ topics: [TOPIC] });
    await admin.fetchTopicOffsets(TOPIC);
    await admin.listGroups();
    await admin.describeGroups([GROUP]);
  })());

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await withTimeout('kafkajs producer', (async () => {
    await producer.connect();
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ key: 'k1', value: 'v1', headers: { h: 'x' } }] });
    await producer.send({ topic: TOPIC, acks: -1, compression: CompressionTypes.GZIP, messages: [{ value: 'v2' }, { value: 'v3' }] });
    await producer.disconnect();
  })());

  const consumer = kafka.consumer({ groupId: GROUP, maxWaitTimeInMs: 100, heartbeatInterval: 200 });
  await withTimeout('kafkajs consumer', (async () => {
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let seen = 0;
    await new Promise((resolve, reject) => {
      consumer.run({ eachMessage: async () => { if (++seen >= 3) resolve(); } }).catch(reject);
    });
    await consumer.commitOffsets([{ topic: TOPIC, partition: 0, offset: '3' }]);
    await new Promise((resolve) => setTimeout(resolve, 500)); // let a heartbeat go out
    await consumer.disconnect();
  })());

  await withTimeout('kafkajs admin deleteTopics', admin.deleteTopics({ topics: [TOPIC] }));
  await admin.disconnect();

  const sasl = new Kafka({ clientId: 'svc-capture-sasl', brokers, logLevel: logLevel.NOTHING, sasl: { mechanism: 'plain', username: SASL_USER, password: SASL_PASSWORD } });
  const saslAdmin = sasl.admin();
  await withTimeout('kafkajs sasl', (async () => {
    await saslAdmin.connect();
    await saslAdmin.listTopics();
    await saslAdmin.disconnect();
  })());
}

async function runKcat() {
  await kcat(['-L']);
  await kcat(['-P', '-t', TOPIC, '-X', 'acks=1'], 'k1\nk2\n');
  await kcat(['-P', '-t', TOPIC, '-X', 'enable.idempotence=true', '-z', 'gzip'], 'i1\ni2\n');
  await kcat(['-C', '-t', TOPIC, '-o', 'beginning', '-e']);
  await kcat(['-G', GROUP, '-o', 'beginning', '-e', '-X', 'enable.partition.eof=true', TOPIC]);
  await kcat(['-L', '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', `sasl.username=${SASL_USER}`, '-X', `sasl.password=${SASL_PASSWORD}`]);
}

function writeFixtures(dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.hex')) fs.rmSync(path.join(dir, name));
  for (const [name, frame] of [...captured].sort(([a], [b]) => a.localeCompare(b))) {
    // 64 hex digits (32 bytes) a line, so a refreshed fixture diffs readably.
    const hex = frame.toString('hex').match(/.{1,64}/g).join('\n');
    fs.writeFileSync(path.join(dir, `${name}.hex`), `${hex}\n`);
  }
}

async function main() {
  const outArg = process.argv.indexOf('--out');
  const out = outArg > 0 ? path.resolve(process.argv[outArg + 1]) : path.join(ROOT, 'test', 'kafka-wire', 'fixtures');
  const server = net.createServer(serve);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
  try {
    currentClient = 'kafkajs';
    await runKafkajs();
    topics.clear();
    committed.clear();
    groupState.members.clear();
    currentClient = 'kcat';
    await runKcat();
  } finally {
    server.close();
    for (const s of sockets) s.destroy();
  }
  writeFixtures(out);
  console.log(`capture: ${captured.size} frames written to ${path.relative(process.cwd(), out)}`);
  console.log([...captured.keys()].sort().join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
