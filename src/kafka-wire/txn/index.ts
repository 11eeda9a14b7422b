export { MAX_TXN_TIMEOUT_MS, TransactionCoordinator, type TxnPartitionRef } from './coordinator';
export { mirrorPartitionTxns } from './partition-mirror';
export { PartitionTxns, type PartitionTxnState } from './partition-state';
export { CONTROL_BIT, TRANSACTIONAL_BIT } from './markers';
export { type TxnRecord, type TxnState } from './store';
