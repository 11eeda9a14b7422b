/**
 * The dashboard's view of consumer groups (src/kafka-wire/group-views.ts): assignments
 * decoded from bytes laid out as Kafka's ConsumerProtocolAssignment v0. Whole groups with lag are
 * checked against a real node and kafkajs in test/gateway/admin/dashboard-pages.browser.test.ts
 * and test/gateway/metrics/group-lag.test.ts.
 */
import { decodeAssignment } from '../../src/kafka-wire/group-views';

describe('decodeAssignment', () => {
  function assignment(topics: Array<[string, number[]]>): Buffer {
    const parts: Buffer[] = [Buffer.from([0, 0])];
    const n = Buffer.alloc(4);
    n.writeInt32BE(topics.length);
    parts.push(n);
    for (const [t, ps] of topics) {
      const len = Buffer.alloc(2);
      len.writeInt16BE(Buffer.byteLength(t));
      parts.push(len, Buffer.from(t));
      const k = Buffer.alloc(4 + 4 * ps.length);
      k.writeInt32BE(ps.length);
      ps.forEach((p, i) => k.writeInt32BE(p, 4 + 4 * i));
      parts.push(k);
    }
    parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff])); // null user data
    return Buffer.concat(parts);
  }

  it('reads the topics and partitions of a consumer assignment', () => {
    expect(decodeAssignment('consumer', assignment([['orders', [0, 2]], ['b', [1]]]))).toEqual([
      { topic: 'orders', partitions: [0, 2] },
      { topic: 'b', partitions: [1] },
    ]);
  });

  it('gives none for another protocol type or bytes that are not an assignment', () => {
    expect(decodeAssignment('connect', assignment([['orders', [0]]]))).toEqual([]);
    expect(decodeAssignment('consumer', Buffer.from([0, 0, 0, 0, 0, 1, 0, 9]))).toEqual([]);
    expect(decodeAssignment('consumer', Buffer.alloc(0))).toEqual([]);
  });
});
