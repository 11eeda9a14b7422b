/** The schema formats by type: each one's parser and compatibility rule. */
import { type SchemaType } from '../types';
import { avroReadProblems, parseAvro } from './avro-schema';
import { type SchemaFormat } from './format';
import { jsonReadProblems, parseJsonSchema } from './json-schema';
import { parseProtobuf, protobufReadProblems } from './protobuf-schema';

export { type Parsed, type ParsedSchema, type ResolvedReference, type SchemaFormat } from './format';

export const FORMATS: Record<SchemaType, SchemaFormat> = {
  AVRO: { parse: parseAvro, readProblems: avroReadProblems },
  JSON: { parse: parseJsonSchema, readProblems: jsonReadProblems },
  PROTOBUF: { parse: parseProtobuf, readProblems: protobufReadProblems },
};
