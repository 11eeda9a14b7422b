/**
 * Kafka topic names for streams (design/kafka.md "Mapping to streams": a stream is one Kafka
 * partition, its topic is `kafkaTopic`, derived from the stream name when unset).
 *
 * Kafka's own rule (kafka.common.internals.Topic.validate): 1–249 characters of
 * [a-zA-Z0-9._-], and not "." or "..". Both the HTTP edge (Svc-Kafka-Topic, PATCH
 * /_streams/{name}) and the Kafka listener use these two functions, so the derivation is
 * one piece of code. docs/protocol.md "Stream config" documents it.
 */

/** Longest topic name Kafka accepts. */
export const KAFKA_TOPIC_MAX_LENGTH = 249;

const TOPIC_CHARS = /^[a-zA-Z0-9._-]+$/;

/** Kafka's topic name rules: 1–249 characters of [a-zA-Z0-9._-], not "." or "..". */
export function isValidKafkaTopic(topic: string): boolean {
  return topic.length >= 1 && topic.length <= KAFKA_TOPIC_MAX_LENGTH && topic !== '.' && topic !== '..' && TOPIC_CHARS.test(topic);
}

/**
 * The topic a stream gets when none is set: drop the leading "/", replace each "/" by ".",
 * every other character outside [a-zA-Z0-9._-] by "_" (one "_" per code point, so an emoji
 * is one "_"), cut to 249 characters, and prefix "." and ".." with "_". `/orders/eu` → `orders.eu`, `/tenant a/ü` → `tenant_a._`.
 *
 * Different names can derive the same topic (`/a/b`, `/a.b`, `/a_b` and `/a b` give
 * `a.b`, `a.b`, `a_b`, `a_b`); setting the topic explicitly resolves a collision.
 */
export function deriveKafkaTopic(streamName: string): string {
  const rest = streamName.startsWith('/') ? streamName.slice(1) : streamName;
  let out = '';
  for (const ch of rest) {
    // for..of walks code points, so a surrogate pair becomes a single "_".
    if (ch === '/') out += '.';
    else if (TOPIC_CHARS.test(ch)) out += ch;
    else out += '_';
    if (out.length >= KAFKA_TOPIC_MAX_LENGTH) break;
  }
  out = out.slice(0, KAFKA_TOPIC_MAX_LENGTH);
  if (out === '.' || out === '..') out = '_' + out;
  // Only reachable for an empty name, which is not a valid stream name; keep the result valid anyway.
  if (out === '') out = '_';
  return out;
}
