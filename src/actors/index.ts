/** The control plane's front door: everything outside src/actors imports from here only. */
import { LocalMetaStore, type LocalMetaStoreOptions } from './meta/local-meta-store';
import { type MetaStore } from './meta/meta-store';

export { type Expect, MetaConflictError, type MetaRecord, type MetaStore } from './meta/meta-store';
export { type LocalMetaStoreOptions } from './meta/local-meta-store';
export * from './auth';

/**
 * Open the embedded metadata store in `dir` (created if missing), e.g. `<dataDir>/meta`.
 * One process may have it open at a time; `close()` it on shutdown after the last write.
 */
export function openLocalMetaStore(dir: string, options?: LocalMetaStoreOptions): Promise<MetaStore> {
  return LocalMetaStore.open(dir, options);
}
