/** The Durable Streams listener's front door. */
export { SUBSCRIPTIONS_PREFIX, createDsHandler } from './ds-handler';
export { type DsContext, STREAM_BASE } from './context';
export { createSubscriptionHost } from './subscription-host';
export { Subscriptions } from './subscriptions';
export { dsInternalReply } from './ds-errors';
export { DS_CORS } from './ds-headers';
