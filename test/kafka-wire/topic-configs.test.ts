import { ConfigProblem, parseTopicConfig, parseTopicConfigs } from '../../src/kafka-wire/topic-configs';

describe('topic configs', () => {
  test('retention.ms maps to whole seconds of TTL, rounded up; -1 and a reset mean none', () => {
    expect(parseTopicConfig('retention.ms', '1500')).toEqual({ ttlSeconds: 2 });
    expect(parseTopicConfig('retention.ms', '-1')).toEqual({ ttlSeconds: null });
    expect(parseTopicConfig('retention.ms', null)).toEqual({ ttlSeconds: null });
    expect(parseTopicConfigs([{ name: 'retention.ms', value: '60000' }, { name: 'cleanup.policy', value: 'delete' }])).toEqual({ ttlSeconds: 60 });
  });

  test('refuses compaction, unknown names, malformed values and changes to fixed configs', () => {
    expect(() => parseTopicConfig('cleanup.policy', 'compact')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('segment.ms', '1')).toThrow(/Unknown topic config name/);
    expect(() => parseTopicConfig('retention.ms', '1e3')).toThrow(ConfigProblem);
    expect(() => parseTopicConfig('min.insync.replicas', '2')).toThrow(/fixed at 1/);
    expect(parseTopicConfig('min.insync.replicas', '1')).toEqual({});
  });
});
