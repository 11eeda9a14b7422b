/** The share-group APIs (KIP-932; share/ holds their state), listed once for the dispatch table. */
import { type AnyApiHandler } from '../handler';
import { SHARE_ACKNOWLEDGE_HANDLER } from './share-acknowledge';
import { SHARE_FETCH_HANDLER } from './share-fetch';
import { SHARE_GROUP_DESCRIBE_HANDLER } from './share-group-describe';
import { SHARE_GROUP_HEARTBEAT_HANDLER } from './share-group-heartbeat';

export const SHARE_HANDLERS: readonly AnyApiHandler[] = [SHARE_GROUP_HEARTBEAT_HANDLER, SHARE_GROUP_DESCRIBE_HANDLER, SHARE_FETCH_HANDLER, SHARE_ACKNOWLEDGE_HANDLER];
