// vitest's default include/exclude would drop a suite that lives in node_modules; this one runs
// only our wrapper file.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/ds-conformance/suite.mjs'],
    exclude: [],
    testTimeout: 30000,
    hookTimeout: 30000,
  },
});
