/**
 * Records in Confluent's wire format for the validation tests: magic byte 0, the 4-byte id, for
 * Protobuf the message indexes (written by Confluent's own client code, `SchemaId` of
 * `@confluentinc/schemaregistry`), then the payload (Protobuf encoded by protobufjs).
 */
import { SchemaId } from '@confluentinc/schemaregistry';
import * as protobuf from 'protobufjs';

/** Two top-level messages, one nested two deep, an enum between them (enums take no message index). */
export const SHOP_PROTO = `syntax = "proto3";
package shop.v1;

message Order {
  string id = 1;
  int64 amount = 2;
  message Line {
    string sku = 1;
    int32 qty = 2;
    message Note { string text = 1; }
  }
  repeated Line lines = 3;
}

enum Kind { KIND_UNSPECIFIED = 0; KIND_FULL = 1; }

message Refund {
  string order_id = 1;
  Kind kind = 2;
}
`;
export const ORDER_JSON = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'shop.Order',
  type: 'object',
  properties: { id: { type: 'string' }, amount: { type: 'integer', minimum: 0 } },
  required: ['id', 'amount'],
  additionalProperties: false,
};

const shop = protobuf.parse(SHOP_PROTO, { keepCase: true }).root;
/** A Protobuf record in Confluent's wire format: the id and `indexes` framed by Confluent's client code, then `message`. */
export const protoRecord = (id: number, indexes: number[], message: Uint8Array): Buffer => Buffer.concat([new SchemaId('PROTOBUF', id, undefined, indexes).idToBytes(), message]);
export const encodeShop = (type: string, value: Record<string, unknown>): Uint8Array => shop.lookupType(type).encode(value).finish();
