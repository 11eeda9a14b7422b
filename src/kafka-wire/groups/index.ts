/** The group coordinator's front door for the group APIs (apis/) and the listener (index.ts). */
export { GroupCoordinator, type GroupSummary, MAX_OFFSET_METADATA } from './coordinator';
export { GroupError } from './errors';
export { type GroupState } from './group';
export { type CommittedOffset } from './offset-store';
export { type GroupView, groupViews } from './group-view';
