/** The group coordinator's front door for the group APIs (apis/) and the listener (index.ts). */
export { CONSUMER_GROUP_TIMEOUTS, type ConsumerGroupSummary, GroupCoordinator, type GroupSummary, MAX_OFFSET_METADATA } from './coordinator';
export { type ConsumerGroupTimeouts, type HeartbeatInput, type TopicsSnapshot } from './consumer-group';
export { GroupError } from './errors';
export { type GroupState } from './group';
export { type CommittedOffset, type GroupType } from './offset-store';
