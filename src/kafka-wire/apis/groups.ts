/** The consumer-group APIs, classic and KIP-848 (groups/ is their coordinator), listed once for the dispatch table. */
import { type AnyApiHandler } from '../handler';
import { CONSUMER_GROUP_DESCRIBE_HANDLER } from './consumer-group-describe';
import { CONSUMER_GROUP_HEARTBEAT_HANDLER } from './consumer-group-heartbeat';
import { DESCRIBE_GROUPS_HANDLER } from './describe-groups';
import { FIND_COORDINATOR_HANDLER } from './find-coordinator';
import { HEARTBEAT_HANDLER } from './heartbeat';
import { JOIN_GROUP_HANDLER } from './join-group';
import { LEAVE_GROUP_HANDLER } from './leave-group';
import { LIST_GROUPS_HANDLER } from './list-groups';
import { OFFSET_COMMIT_HANDLER } from './offset-commit';
import { OFFSET_FETCH_HANDLER } from './offset-fetch';
import { SYNC_GROUP_HANDLER } from './sync-group';

export const GROUP_HANDLERS: readonly AnyApiHandler[] = [
  FIND_COORDINATOR_HANDLER,
  JOIN_GROUP_HANDLER,
  SYNC_GROUP_HANDLER,
  HEARTBEAT_HANDLER,
  LEAVE_GROUP_HANDLER,
  OFFSET_COMMIT_HANDLER,
  OFFSET_FETCH_HANDLER,
  DESCRIBE_GROUPS_HANDLER,
  LIST_GROUPS_HANDLER,
  CONSUMER_GROUP_HEARTBEAT_HANDLER,
  CONSUMER_GROUP_DESCRIBE_HANDLER,
];
