/**
 * A request or response body that does not follow the Kafka protocol: truncated, a length
 * out of range, a null where the schema forbids one, a varint longer than its type allows.
 * The listener answers it by closing the connection, as a Kafka broker does with a frame
 * it cannot parse.
 */
export class KafkaProtocolError extends Error {
  override readonly name: string = 'KafkaProtocolError';
}

/** An API version outside the range the codec was generated for. */
export class UnsupportedVersionError extends KafkaProtocolError {
  override readonly name: string = 'UnsupportedVersionError';

  constructor(
    readonly api: string,
    readonly version: number,
  ) {
    super(`${api} version ${version} is not supported`);
  }
}
