/**
 * Stream metadata is normalised once where it is read from disk (src/shards/worker/stream-meta.ts)
 * and written back with the fields at their default left out.
 */
import { patchMeta, readMeta, storedMeta } from '../../src/shards/worker/stream-meta';

const OLD = { name: '/old', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, createdAtMs: 5 };

describe('stream metadata', () => {
  it('fills in every field a catalog written before it lacks', () => {
    expect(readMeta(OLD)).toEqual({
      ...OLD,
      schema: null,
      schemaValidate: false,
      kafkaTopic: null,
      idleTtlSeconds: null,
      fork: null,
      forkRefs: 0,
      softDeleted: false,
      writerSeq: null,
      importing: false,
      durability: null,
    });
  });

  it('writes the fields at their default out again, so old and new catalogs look alike', () => {
    expect(JSON.stringify(storedMeta(readMeta(OLD)))).toBe(JSON.stringify(OLD));
    const full = { ...OLD, schema: 's', schemaValidate: true, kafkaTopic: 't', idleTtlSeconds: 9, forkRefs: 2, softDeleted: true, writerSeq: 'w', importing: true, durability: 'async' as const };
    expect(storedMeta(readMeta(full))).toEqual(full);
  });

  it('applies a CONFIG patch, explicit nulls included, and stays normalised', () => {
    const m = readMeta({ ...OLD, schema: 's', kafkaTopic: 't', forkRefs: 1 });
    expect(patchMeta(m, { schema: null, kafkaTopic: null, forkRefs: 0, writerSeq: 'a' })).toEqual({ ...readMeta(OLD), writerSeq: 'a' });
  });

  it('publishes an import with the patch {importing: false}, which a stored form leaves out', () => {
    const staging = readMeta({ ...OLD, importing: true });
    expect(staging.importing).toBe(true);
    const published = patchMeta(staging, { importing: false });
    expect(published).toEqual(readMeta(OLD));
    expect(JSON.stringify(storedMeta(published))).toBe(JSON.stringify(OLD));
  });
});
