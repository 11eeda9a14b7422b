/** The objects module's front door: stream data in object storage (docs/cluster.md, "Objects mode"). */
export { DEFAULT_LEDGER_DEADLINE_MS, type EntryValue, Ledger, type LedgerEntry, type LedgerMeta, STREAMS_PER_TXN, type StreamCommit } from './ledger';
export { type Fence, LedgerKeys, compactedObjectKey, entryName, fenceValue, groupObjectKey, parseEntryName, parseFence, sameFence, streamOfSegment, streamSegment } from './ledger-keys';
export { type CompactionOptions, type CompactionTick, Compactor, type PlacedStream } from './compaction';
export { type HolderCompare, Reaper, type ReaperOptions, type ReaperTick } from './reaper';
export { ObjectCensus, type ObjectCounts } from './object-census';
