/** Cluster edges of the HTTP listeners: the owner check (307) and the cluster-wide list. */
export { type OwnedListener, type OwnerCheckDeps, ownerCheck } from './owner-check';
export { LIST_SCOPE_HEADER, clusterList } from './cluster-list';
export { SCHEMA_APPLIED_PREFIX, SCHEMA_PREFIX, type SchemaApplied, SharedSchemas } from './shared-schemas';
export { type MovedTo, type ServedChange, ServedStreams, servedHere } from './served-streams';
export { ServedWatch } from './served-watch';
