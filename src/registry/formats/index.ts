/** The schema formats by type: each one's parser and compatibility rule. */
import { type SchemaType } from '../types';
import { avroReadProblems, avroRecordDecoder, parseAvro } from './avro-schema';
import { type ParsedSchema, type RecordDecoder, type ResolvedReference, type SchemaFormat } from './format';
import { jsonReadProblems, jsonRecordDecoder, parseJsonSchema } from './json-schema';
import { parseProtobuf, protobufReadProblems, protobufRecordDecoder } from './protobuf-schema';

export { type Parsed, type ParsedSchema, type RecordDecoder, type ResolvedReference, type SchemaFormat } from './format';

export const FORMATS: Record<SchemaType, SchemaFormat> = {
  AVRO: { parse: parseAvro, readProblems: avroReadProblems },
  JSON: { parse: parseJsonSchema, readProblems: jsonReadProblems },
  PROTOBUF: { parse: parseProtobuf, readProblems: protobufReadProblems },
};

/** A record check for a parsed schema (validation at the broker); `text` and `references` as parsed. */
export function recordDecoder(type: SchemaType, parsed: ParsedSchema, text: string, references: readonly ResolvedReference[]): RecordDecoder {
  if (type === 'AVRO') return avroRecordDecoder(parsed);
  if (type === 'PROTOBUF') return protobufRecordDecoder(parsed);
  return jsonRecordDecoder(text, references);
}
