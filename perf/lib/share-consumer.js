'use strict';
// A Kafka share-group member for perf/share-groups.js, on the node's own codecs (dist/kafka-wire):
// no client installable here has a share consumer (docs/kafka.md, "Share groups"). One connection,
// requests answered in order: ShareGroupHeartbeat (join, leave), ShareFetch, ShareAcknowledge, v0.
const net = require('node:net');
const path = require('node:path');

const DIST = path.join(__dirname, '..', '..', 'dist', 'kafka-wire');
const { encodeRequestHeader, decodeResponseHeader } = require(path.join(DIST, 'messages', 'header'));
const hb = require(path.join(DIST, 'messages', 'share-group-heartbeat'));
const sf = require(path.join(DIST, 'messages', 'share-fetch'));
const sa = require(path.join(DIST, 'messages', 'share-acknowledge'));
const { Reader } = require(path.join(DIST, 'protocol', 'reader'));
const { Writer } = require(path.join(DIST, 'protocol', 'writer'));

const ACCEPT = 1;

class ShareConsumer {
  #socket;
  #buf = Buffer.alloc(0);
  #waiting = [];
  #correlation = 1;
  #epoch = 0;
  memberId = '';
  topicId = '';

  constructor(socket) {
    this.#socket = socket;
    socket.on('data', (d) => {
      this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
      while (this.#buf.length >= 4 && this.#buf.length >= 4 + this.#buf.readInt32BE(0)) {
        const size = this.#buf.readInt32BE(0);
        const frame = this.#buf.subarray(4, 4 + size);
        this.#buf = this.#buf.subarray(4 + size);
        this.#waiting.shift()?.resolve(frame);
      }
    });
    socket.on('close', () => {
      for (const w of this.#waiting.splice(0)) w.reject(new Error('connection closed'));
    });
  }

  /** Connect and join `group` subscribed to `topic` (one partition: partition 0 is fetched). */
  static async join(broker, group, topic) {
    const [host, port] = broker.split(':');
    const socket = await new Promise((resolve, reject) => {
      const s = net.connect({ host, port: Number(port) }, () => resolve(s));
      s.once('error', reject);
    });
    socket.setNoDelay(true);
    const c = new ShareConsumer(socket);
    c.group = group;
    const r = await c.#request(76, (w) => hb.encodeShareGroupHeartbeatRequest(w, { groupId: group, memberId: '', memberEpoch: 0, rackId: null, subscribedTopicNames: [topic] }, 0), (rd) => hb.decodeShareGroupHeartbeatResponse(rd, 0));
    if (r.errorCode !== 0) throw new Error(`ShareGroupHeartbeat: error ${r.errorCode} ${r.errorMessage}`);
    c.memberId = r.memberId;
    c.topicId = r.assignment.topicPartitions[0].topicId;
    return c;
  }

  #request(apiKey, body, decode) {
    const w = new Writer();
    const size = w.reserveInt32();
    encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: 0, correlationId: this.#correlation++, clientId: 'perf-share' }, 2);
    body(w);
    w.int32At(size, w.length - 4);
    this.#socket.write(Buffer.from(w.toBuffer()));
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject })).then((frame) => {
      const rd = new Reader(frame, 0);
      decodeResponseHeader(rd, 1);
      return decode(rd);
    });
  }

  /** Acquire records of partition 0: their offsets (the answer's acquired ranges). */
  async fetch(maxWaitMs) {
    const req = { groupId: this.group, memberId: this.memberId, shareSessionEpoch: this.#epoch, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, topics: [{ topicId: this.topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 1 << 20, acknowledgementBatches: [] }] }], forgottenTopicsData: [] };
    const r = await this.#request(78, (w) => sf.encodeShareFetchRequest(w, req, 0), (rd) => sf.decodeShareFetchResponse(rd, 0));
    if (r.errorCode !== 0) throw new Error(`ShareFetch: error ${r.errorCode}`);
    this.#epoch++;
    const out = [];
    for (const t of r.responses) for (const p of t.partitions) for (const a of p.acquiredRecords) for (let o = Number(a.firstOffset); o <= Number(a.lastOffset); o++) out.push(o);
    return out;
  }

  /** Accept `offsets` (ascending): the number applied. */
  async accept(offsets) {
    const batches = [];
    for (const o of offsets) {
      const last = batches[batches.length - 1];
      if (last !== undefined && Number(last.lastOffset) === o - 1) last.lastOffset = BigInt(o);
      else batches.push({ firstOffset: BigInt(o), lastOffset: BigInt(o), acknowledgeTypes: [ACCEPT] });
    }
    const req = { groupId: this.group, memberId: this.memberId, shareSessionEpoch: this.#epoch, topics: [{ topicId: this.topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: batches }] }] };
    const r = await this.#request(79, (w) => sa.encodeShareAcknowledgeRequest(w, req, 0), (rd) => sa.decodeShareAcknowledgeResponse(rd, 0));
    this.#epoch++;
    const code = r.errorCode || r.responses[0]?.partitions[0]?.errorCode || 0;
    if (code !== 0) throw new Error(`ShareAcknowledge: error ${code}`);
    return offsets.length;
  }

  async leave() {
    await this.#request(76, (w) => hb.encodeShareGroupHeartbeatRequest(w, { groupId: this.group, memberId: this.memberId, memberEpoch: -1, rackId: null, subscribedTopicNames: null }, 0), (rd) => hb.decodeShareGroupHeartbeatResponse(rd, 0)).catch(() => undefined);
    this.#socket.end();
  }
}

module.exports = { ShareConsumer };
