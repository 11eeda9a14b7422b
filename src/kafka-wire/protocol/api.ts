import { KafkaProtocolError, UnsupportedVersionError } from './errors';

/** One Kafka API as the listener serves it: key, name and the version range it advertises. */
export interface KafkaApi {
  readonly apiKey: number;
  /** Kafka's name for the API, e.g. "Produce". */
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /**
   * First flexible version (KIP-482: compact strings and arrays, tagged fields, request header
   * v2, response header v1), or null when no advertised version is flexible.
   */
  readonly flexibleVersion: number | null;
}

/** Throw UnsupportedVersionError unless `version` is in the advertised range of `api`. */
export function checkVersion(api: KafkaApi, version: number): void {
  if (!Number.isInteger(version) || version < api.minVersion || version > api.maxVersion) {
    throw new UnsupportedVersionError(api.name, version);
  }
}

/** True when `version` of `api` uses the flexible encoding. */
export function isFlexible(api: KafkaApi, version: number): boolean {
  return api.flexibleVersion !== null && version >= api.flexibleVersion;
}

/**
 * A field that is nullable only in some versions, encoded at a version where it is not:
 * Java's generated writers refuse the same ("non-nullable field was serialized as null").
 */
export function nonNull<T>(value: T | null, field: string): T {
  if (value === null) throw new KafkaProtocolError(`${field} cannot be null in this version`);
  return value;
}
