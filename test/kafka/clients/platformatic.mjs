// @platformatic/kafka (ESM only) driven from a child process: the Jest tests run CommonJS.
// Usage: node platformatic.mjs '<json command>'; prints one JSON result line.
//   {op: "produce", broker, topic, messages: [{key, value | valueBase64 (binary), headers}], acks, compression, idempotent, sasl}
//   {op: "consume", broker, topic, partition, sasl}: every record from offset 0 to the high watermark
//   {op: "admin", broker, create: [{topic, partitions}], delete: [topic], sasl}
import { Admin, Consumer, Producer, stringSerializers, stringDeserializers } from '@platformatic/kafka';

const cmd = JSON.parse(process.argv[2]);
const base = { clientId: 'svc-test-platformatic', bootstrapBrokers: [cmd.broker], retries: 1, retryDelay: 100, timeout: 10000 };
if (cmd.sasl) base.sasl = { mechanism: 'PLAIN', username: 'svc', password: cmd.sasl };

async function produce() {
  // Binary values (valueBase64) pass through as Buffers; strings are UTF-8 as before.
  const serializers = { ...stringSerializers, value: (v) => (Buffer.isBuffer(v) ? v : stringSerializers.value(v)) };
  const p = new Producer({ ...base, serializers, idempotent: cmd.idempotent === true, acks: cmd.acks ?? -1, compression: cmd.compression ?? 'none', autocreateTopics: cmd.autocreate === true });
  try {
    const r = await p.send({ messages: cmd.messages.map((m) => ({ topic: cmd.topic, partition: 0, key: m.key, value: m.valueBase64 === undefined ? m.value : Buffer.from(m.valueBase64, 'base64'), headers: m.headers ? new Map(Object.entries(m.headers)) : undefined })) });
    return { offsets: (r.offsets ?? []).map((o) => ({ partition: o.partition, offset: String(o.offset) })) };
  } finally {
    await p.close();
  }
}

async function consume() {
  const c = new Consumer({ ...base, groupId: 'unused', deserializers: stringDeserializers });
  try {
    const md = await c.metadata({ topics: [cmd.topic] });
    const topic = md.topics.get(cmd.topic);
    const leader = topic.partitions[cmd.partition ?? 0].leader;
    const out = [];
    let offset = 0n;
    for (let round = 0; round < 50; round++) {
      const res = await c.fetch({ node: leader, maxWaitTime: 100, topics: [{ topicId: topic.id, partitions: [{ partition: cmd.partition ?? 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, partitionMaxBytes: 1 << 20 }] }] });
      const part = res.responses[0].partitions[0];
      if (part.errorCode !== 0) throw new Error(`fetch error ${part.errorCode}`);
      for (const batch of part.records ?? []) {
        for (const r of batch.records) {
          const o = batch.firstOffset + BigInt(r.offsetDelta);
          if (o < offset) continue;
          const dec = (b) => (b == null ? null : b.toString());
          out.push({ offset: String(o), key: dec(r.key), value: dec(r.value), timestamp: String(batch.firstTimestamp + BigInt(r.timestampDelta)), headers: Object.fromEntries((r.headers ?? []).map(([k, v]) => [dec(k), dec(v)])), codec: batch.attributes & 7 });
          offset = o + 1n;
        }
      }
      if (offset >= part.highWatermark) break;
    }
    return { records: out };
  } finally {
    await c.close();
  }
}

async function admin() {
  const a = new Admin(base);
  try {
    if (cmd.create) await a.createTopics({ topics: cmd.create.map((t) => t.topic), partitions: cmd.create[0].partitions ?? 1, replicas: 1 });
    if (cmd.delete) await a.deleteTopics({ topics: cmd.delete });
    return { topics: await a.listTopics() };
  } finally {
    await a.close();
  }
}

const ops = { produce, consume, admin };
ops[cmd.op]().then(
  (r) => console.log(JSON.stringify({ ok: true, ...r })),
  (e) => {
    console.log(JSON.stringify({ ok: false, error: e.message, code: e.code, errors: (e.errors ?? []).map((x) => x.message) }));
  },
);
