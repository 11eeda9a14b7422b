/**
 * A test-only share-group client (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch
 * and ShareAcknowledge spoken with the project's own codecs (src/kafka-wire/messages) over
 * RawKafka. No client installed here speaks these RPCs (kafkajs, @platformatic/kafka and Debian's
 * librdkafka 2.0.2 have no share consumer), so the share-group tests use this one.
 */
import { decodeCreateTopicsResponse, encodeCreateTopicsRequest } from '../../src/kafka-wire/messages/create-topics';
import { type ProduceResponse, decodeProduceResponse, encodeProduceRequest } from '../../src/kafka-wire/messages/produce';
import { type ShareAcknowledgeResponse, decodeShareAcknowledgeResponse, encodeShareAcknowledgeRequest } from '../../src/kafka-wire/messages/share-acknowledge';
import { type ShareFetchResponse, decodeShareFetchResponse, encodeShareFetchRequest } from '../../src/kafka-wire/messages/share-fetch';
import { type ShareGroupDescribeResponse, decodeShareGroupDescribeResponse, encodeShareGroupDescribeRequest } from '../../src/kafka-wire/messages/share-group-describe';
import { type ShareGroupHeartbeatResponse, decodeShareGroupHeartbeatResponse, encodeShareGroupHeartbeatRequest } from '../../src/kafka-wire/messages/share-group-heartbeat';
import { type ApiVersionsResponse, decodeApiVersionsResponse, encodeApiVersionsRequest } from '../../src/kafka-wire/messages/api-versions';
import { batchSize, decodeRecords } from '../../src/util/record-batch';
import { RawKafka } from './kafka-test-client';
import { batchOf } from './raw-produce';

export const ACCEPT = 1;
export const RELEASE = 2;
export const REJECT = 3;

/** One acknowledgement batch: offsets [first, last] all of `type`. */
export interface Ack {
  first: number;
  last: number;
  type: number;
}

/** What one partition of a ShareFetch answer gave: acquired offsets with their delivery counts and values. */
export interface Got {
  partition: number;
  errorCode: number;
  acknowledgeErrorCode: number;
  records: Array<{ offset: number; deliveryCount: number; value: string | null }>;
}

/** The records of `buf` (uncompressed batches) by offset. */
function valuesOf(buf: Buffer | null): Map<number, string | null> {
  const out = new Map<number, string | null>();
  if (buf === null) return out;
  for (let pos = 0; pos + 61 <= buf.length; pos += batchSize(buf, pos)) {
    for (const r of decodeRecords(buf, pos)) out.set(r.offset, r.value === null ? null : r.value.toString());
  }
  return out;
}

/** The acquired records of a ShareFetch answer, with their values, per partition. */
export function gotOf(res: ShareFetchResponse): Got[] {
  return res.responses.flatMap((t) =>
    t.partitions.map((p) => {
      const values = valuesOf(p.records);
      const records: Got['records'] = [];
      for (const a of p.acquiredRecords) {
        for (let o = Number(a.firstOffset); o <= Number(a.lastOffset); o++) records.push({ offset: o, deliveryCount: a.deliveryCount, value: values.has(o) ? values.get(o)! : '<missing>' });
      }
      return { partition: p.partitionIndex, errorCode: p.errorCode, acknowledgeErrorCode: p.acknowledgeErrorCode, records };
    }),
  );
}

/** One connection speaking the share-group APIs (all v0, flexible). */
export class ShareWire {
  private constructor(readonly k: RawKafka) {}

  static async connect(broker: string): Promise<ShareWire> {
    return new ShareWire(await RawKafka.connect(broker));
  }

  close(): void {
    this.k.close();
  }

  async apiVersions(): Promise<ApiVersionsResponse> {
    const r = await this.k.request(18, 3, true, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'svc-test', clientSoftwareVersion: '1' }, 3), 0);
    return decodeApiVersionsResponse(r, 3);
  }

  async createTopic(name: string, partitions: number): Promise<number> {
    const r = await this.k.request(19, 7, true, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7));
    return decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode;
  }

  /** Produce `values` to one partition, `perBatch` records a batch (acks=-1). */
  async produce(topic: string, partition: number, values: string[], perBatch = 10): Promise<void> {
    for (let i = 0; i < values.length; i += perBatch) {
      const records = batchOf(values.slice(i, i + perBatch));
      const r = await this.k.request(0, 9, true, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] }, 9));
      const res: ProduceResponse = decodeProduceResponse(r, 9);
      const code = res.responses[0]!.partitionResponses[0]!.errorCode;
      if (code !== 0) throw new Error(`produce error ${code}`);
    }
  }

  async heartbeat(req: { groupId: string; memberId: string; memberEpoch: number; subscribedTopicNames?: string[] | null }): Promise<ShareGroupHeartbeatResponse> {
    const r = await this.k.request(76, 0, true, (w) => encodeShareGroupHeartbeatRequest(w, { rackId: null, subscribedTopicNames: null, ...req }, 0));
    return decodeShareGroupHeartbeatResponse(r, 0);
  }

  async describe(groupIds: string[]): Promise<ShareGroupDescribeResponse> {
    const r = await this.k.request(77, 0, true, (w) => encodeShareGroupDescribeRequest(w, { groupIds, includeAuthorizedOperations: false }, 0));
    return decodeShareGroupDescribeResponse(r, 0);
  }

  /** ShareFetch of the given partitions of one topic, with their acknowledgements. */
  async fetch(o: { groupId: string; memberId: string; epoch: number; topicId: string; partitions: number[]; acks?: Record<number, Ack[]>; maxWaitMs?: number; partitionMaxBytes?: number; forget?: number[] }): Promise<ShareFetchResponse> {
    const r = await this.k.request(78, 0, true, (w) =>
      encodeShareFetchRequest(
        w,
        {
          groupId: o.groupId,
          memberId: o.memberId,
          shareSessionEpoch: o.epoch,
          maxWaitMs: o.maxWaitMs ?? 0,
          minBytes: 1,
          maxBytes: 1 << 20,
          topics: o.partitions.length === 0 ? [] : [{ topicId: o.topicId, partitions: o.partitions.map((p) => ({ partitionIndex: p, partitionMaxBytes: o.partitionMaxBytes ?? 1 << 20, acknowledgementBatches: ackBatches(o.acks?.[p]) })) }],
          forgottenTopicsData: o.forget === undefined ? [] : [{ topicId: o.topicId, partitions: o.forget }],
        },
        0,
      ),
    );
    return decodeShareFetchResponse(r, 0);
  }

  async acknowledge(o: { groupId: string; memberId: string; epoch: number; topicId: string; acks: Record<number, Ack[]> }): Promise<ShareAcknowledgeResponse> {
    const r = await this.k.request(79, 0, true, (w) =>
      encodeShareAcknowledgeRequest(
        w,
        {
          groupId: o.groupId,
          memberId: o.memberId,
          shareSessionEpoch: o.epoch,
          topics: [{ topicId: o.topicId, partitions: Object.entries(o.acks).map(([p, acks]) => ({ partitionIndex: Number(p), acknowledgementBatches: ackBatches(acks) })) }],
        },
        0,
      ),
    );
    return decodeShareAcknowledgeResponse(r, 0);
  }
}

function ackBatches(acks: Ack[] | undefined): Array<{ firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }> {
  return (acks ?? []).map((a) => ({ firstOffset: BigInt(a.first), lastOffset: BigInt(a.last), acknowledgeTypes: [a.type] }));
}

/** Acknowledgement batches of `offsets` (ascending runs), all of `type`. */
export function acksOf(offsets: readonly number[], type: number): Ack[] {
  const out: Ack[] = [];
  for (const o of [...offsets].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last !== undefined && last.last === o - 1) last.last = o;
    else out.push({ first: o, last: o, type });
  }
  return out;
}
