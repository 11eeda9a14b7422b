/** Share groups (KIP-932): the share-partition state machine, its durable store, and what the edges do with its records. */
export { type AckRefusal, type AckResult, type AckType, type Acquired, SharePartition, type SharePartitionLimits, type SharePartitionRecord, type ShareRecordState, type ShareTotals } from './share-partition';
export { SHARE_GROUP_DEFAULTS, type ShareGroupConfig, ShareStates, limitsOf, membershipTimeouts, parseShareGroupConfig } from './share-states';
export { type JsonRecord, deadLetter, readRange, runsOf } from './share-records';
export { type SharePartitionView, sharePartitionViews } from './share-view';
