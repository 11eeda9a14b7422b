/**
 * The Durable Streams reserved subscription APIs (`/v1/stream/__ds/...`): webhook and
 * pull-wake subscriptions, signed webhooks and their JWKS. The DS listener constructs one
 * `Subscriptions`, routes `__ds` requests to `handle` and reports stream changes.
 */
export { Subscriptions } from './subscriptions';
export type { SubscriptionHost, SubscriptionRequest, SubscriptionResponse, SubscriptionsOptions } from './types';
