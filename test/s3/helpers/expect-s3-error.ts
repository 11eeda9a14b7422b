/** Asserts that `fn` throws an S3Error with `code` (the S3 error code a client would see). */
import { S3Error } from '../../../src/s3/errors';

export function expectS3Error(fn: () => unknown, code: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(S3Error);
  expect((caught as S3Error).code).toBe(code);
}
