export { MAX_TXN_TIMEOUT_MS, TransactionCoordinator, type TxnPartitionRef, restorePartitionTxns } from './coordinator';
export { type PartitionTxns } from './partition-state';
export { CONTROL_BIT, TRANSACTIONAL_BIT } from './markers';
export { type TxnRecord, type TxnState } from './store';
