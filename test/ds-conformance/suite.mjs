// The published Durable Streams conformance suite, run by vitest against the URL in
// CONFORMANCE_TEST_URL (see vitest.config.mjs here and ds-conformance.test.ts, which starts the node).
import { runConformanceTests } from '@durable-streams/server-conformance-tests';

runConformanceTests({
  baseUrl: process.env.CONFORMANCE_TEST_URL,
  subscriptions: true,
  longPollTimeoutMs: Number(process.env.CONFORMANCE_LONG_POLL_MS ?? '500'),
});
