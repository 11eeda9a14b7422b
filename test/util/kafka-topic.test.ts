/**
 * Kafka topic names for streams (docs/protocol.md "Kafka topic of a stream"): Kafka's topic
 * rules, and the topic a stream name derives when none is set.
 */
import { KAFKA_TOPIC_MAX_LENGTH, deriveKafkaTopic, isValidKafkaTopic } from '../../src/util/kafka-topic';

describe('isValidKafkaTopic', () => {
  test('accepts 1 to 249 characters of letters, digits, ".", "_" and "-"', () => {
    for (const t of ['a', 'orders.eu', 'Orders_2024-01', '_', '...', 'x'.repeat(249)]) expect([t, isValidKafkaTopic(t)]).toEqual([t, true]);
  });

  test('refuses the empty name, "." and "..", names over 249 characters and any other character', () => {
    for (const t of ['', '.', '..', 'x'.repeat(250), 'a b', 'a/b', 'ü', 'a:b', 'a\n']) expect([t, isValidKafkaTopic(t)]).toEqual([t, false]);
  });
});

describe('deriveKafkaTopic', () => {
  test('drops the leading slash and turns the other slashes into dots', () => {
    expect(deriveKafkaTopic('/orders')).toBe('orders');
    expect(deriveKafkaTopic('/orders/eu/2024')).toBe('orders.eu.2024');
  });

  test('keeps letters, digits, ".", "_" and "-" as they are', () => {
    expect(deriveKafkaTopic('/Orders_v2-x.y')).toBe('Orders_v2-x.y');
  });

  test('replaces every other character by one underscore per code point', () => {
    expect(deriveKafkaTopic('/tenant 1/bestellungen-ü')).toBe('tenant_1.bestellungen-_');
    expect(deriveKafkaTopic('/a:b@c')).toBe('a_b_c');
    // An emoji is two UTF-16 code units but one code point: one underscore.
    expect(deriveKafkaTopic('/x\u{1F600}y')).toBe('x_y');
  });

  test('cuts the result to 249 characters', () => {
    const t = deriveKafkaTopic('/' + 'a'.repeat(300));
    expect(t).toHaveLength(KAFKA_TOPIC_MAX_LENGTH);
    expect(deriveKafkaTopic('/' + 'ä'.repeat(300))).toBe('_'.repeat(249));
  });

  test('prefixes "." and ".." with an underscore', () => {
    expect(deriveKafkaTopic('/.')).toBe('_.');
    expect(deriveKafkaTopic('/..')).toBe('_..');
  });

  test('always yields a valid topic', () => {
    const names = ['/orders', '/a/b/c', '/ä/ö/ü', '/' + 'z/'.repeat(200) + 'z', '/.', '/..', '/x y', '/%41'];
    for (const n of names) expect([n, isValidKafkaTopic(deriveKafkaTopic(n))]).toEqual([n, true]);
  });

  test('can derive the same topic from different names, which an explicit topic tells apart', () => {
    expect(deriveKafkaTopic('/a/b')).toBe(deriveKafkaTopic('/a.b'));
    expect(deriveKafkaTopic('/a b')).toBe(deriveKafkaTopic('/a_b'));
  });
});
