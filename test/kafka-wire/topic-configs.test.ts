import { type StreamInfo } from '../../src/shards';
import { ConfigProblem, describeTopicConfigs, parseTopicConfig, parseTopicConfigs } from '../../src/kafka-wire/topic-configs';

describe('topic configs', () => {
  test('retention.ms maps to whole seconds of TTL, rounded up; -1 and a reset mean none', () => {
    expect(parseTopicConfig('retention.ms', '1500')).toEqual({ ttlSeconds: 2 });
    expect(parseTopicConfig('retention.ms', '-1')).toEqual({ ttlSeconds: null });
    expect(parseTopicConfig('retention.ms', null)).toEqual({ ttlSeconds: null });
    expect(parseTopicConfigs([{ name: 'retention.ms', value: '60000' }, { name: 'cleanup.policy', value: 'delete' }])).toEqual({ ttlSeconds: 60 });
  });

  test('flush.messages maps to the durability class: 1 is sync, larger is async, a reset the node default', () => {
    expect(parseTopicConfig('flush.messages', '1')).toEqual({ durability: 'sync' });
    expect(parseTopicConfig('flush.messages', '9223372036854775807')).toEqual({ durability: 'async' });
    expect(parseTopicConfig('flush.messages', '10000')).toEqual({ durability: 'async' });
    expect(parseTopicConfig('flush.messages', null)).toEqual({ durability: null });
    expect(() => parseTopicConfig('flush.messages', '0')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('flush.messages', '9223372036854775808')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('flush.ms', '1000')).toThrow(/Unknown topic config name/);
    const info = { durability: 'async', durabilityDefault: false, ttlSeconds: null } as unknown as StreamInfo;
    expect(describeTopicConfigs(info).find((c) => c.name === 'flush.messages')).toMatchObject({ value: '9223372036854775807', isDefault: false, readOnly: false });
    const dflt = { durability: 'sync', durabilityDefault: true, ttlSeconds: null } as unknown as StreamInfo;
    expect(describeTopicConfigs(dflt).find((c) => c.name === 'flush.messages')).toMatchObject({ value: '1', isDefault: true });
  });

  test('refuses compaction, unknown names, malformed values and changes to fixed configs', () => {
    expect(() => parseTopicConfig('cleanup.policy', 'compact')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('segment.ms', '1')).toThrow(/Unknown topic config name/);
    expect(() => parseTopicConfig('retention.ms', '1e3')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('min.insync.replicas', '2')).toThrow(/fixed at 1/);
    expect(parseTopicConfig('min.insync.replicas', '1')).toEqual({});
  });
});
