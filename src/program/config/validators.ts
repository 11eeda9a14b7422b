/**
 * The two schema checkers a program's loader may use. Both take the merged config (defaults
 * filled in) and give back every problem, each at a path, so the loader can name the flag,
 * variable or file key it came from:
 * - `ajvValidator`: ajv, compiled once; messages in ajv's words ("must be integer").
 * - `typeboxValidator`: TypeBox's Value module; converts values to the schema's types first
 *   (environment text `"12345"` for a string field stays a string, `"true"` becomes a boolean)
 *   and words messages as TypeBox does ("Expected boolean", "Unexpected property").
 */
import { type TObject } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';
import Ajv from 'ajv';

export interface SchemaProblem {
  /** Path of the bad value; for an unknown key, the key's own path. */
  readonly path: readonly string[];
  /** `unknown` for a key the schema does not have, `invalid` for a value it refuses. */
  readonly kind: 'unknown' | 'invalid';
  readonly message: string;
}

export interface Validator {
  /** The config as checked (converted, for validators that convert) and every problem with it. */
  check(config: unknown): { value: unknown; problems: SchemaProblem[] };
}

const split = (pointer: string): string[] => pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));

export function ajvValidator(schema: TObject): Validator {
  // strict: false, so schema annotations of our own (descriptions, markers) are not refused.
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  return {
    check(config) {
      if (validate(config)) return { value: config, problems: [] };
      const problems = (validate.errors ?? []).map((e): SchemaProblem =>
        e.keyword === 'additionalProperties'
          ? { path: [...split(e.instancePath), String(e.params.additionalProperty)], kind: 'unknown', message: e.message ?? 'unknown key' }
          : { path: split(e.instancePath), kind: 'invalid', message: e.message ?? 'invalid' },
      );
      return { value: config, problems };
    },
  };
}

export function typeboxValidator(schema: TObject): Validator {
  return {
    check(config) {
      const value = Value.Convert(schema, config);
      const problems = [...Value.Errors(schema, value)].map((e): SchemaProblem => ({
        path: split(e.path),
        kind: e.type === ValueErrorType.ObjectAdditionalProperties ? 'unknown' : 'invalid',
        message: e.message,
      }));
      return { value, problems };
    },
  };
}
