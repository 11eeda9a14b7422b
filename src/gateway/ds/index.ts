/** The Durable Streams listener's front door. */
export { createDsHandler } from './ds-handler';
export { type DsContext, STREAM_BASE } from './context';
export { SUBSCRIPTIONS_PREFIX } from './ds-handler';
export { createSubscriptionHost } from './subscription-host';
export { Subscriptions } from './subscriptions';
export { dsInternalReply } from './ds-errors';
export { DS_CORS } from './ds-headers';
