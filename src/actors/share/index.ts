/** Share groups (KIP-932): the share-partition state machine and its durable store. */
export { type AckRefusal, type AckResult, type AckType, type Acquired, SharePartition, type SharePartitionLimits, type SharePartitionRecord, type ShareRecordState } from './share-partition';
export { SHARE_GROUP_DEFAULTS, type ShareGroupConfig, ShareStates, limitsOf, parseShareGroupConfig } from './share-states';
