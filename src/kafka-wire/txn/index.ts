export { MAX_TXN_TIMEOUT_MS, TransactionCoordinator, type TxnPartitionRef } from './coordinator';
export { CONTROL_BIT, TRANSACTIONAL_BIT } from './markers';
export { type TxnRecord, type TxnState } from './store';
