/** The admin APIs tools call beyond topics and groups (docs/kafka.md, "Admin APIs"), listed once for the dispatch table. */
import { type AnyApiHandler } from '../handler';
import { ALTER_CONFIGS_HANDLER, INCREMENTAL_ALTER_CONFIGS_HANDLER } from './alter-configs';
import { CREATE_PARTITIONS_HANDLER } from './create-partitions';
import { DELETE_GROUPS_HANDLER } from './delete-groups';
import { DELETE_RECORDS_HANDLER } from './delete-records';
import { DESCRIBE_CLUSTER_HANDLER } from './describe-cluster';
import { DESCRIBE_CONFIGS_HANDLER } from './describe-configs';
import { OFFSET_DELETE_HANDLER } from './offset-delete';

export const ADMIN_HANDLERS: readonly AnyApiHandler[] = [
  DESCRIBE_CONFIGS_HANDLER,
  ALTER_CONFIGS_HANDLER,
  INCREMENTAL_ALTER_CONFIGS_HANDLER,
  CREATE_PARTITIONS_HANDLER,
  DELETE_RECORDS_HANDLER,
  DESCRIBE_CLUSTER_HANDLER,
  DELETE_GROUPS_HANDLER,
  OFFSET_DELETE_HANDLER,
];
