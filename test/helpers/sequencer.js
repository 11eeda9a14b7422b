/**
 * Jest's order (failed first, then longest, else largest file first), with the suites that call
 * `runAlone()` (run-alone.ts) spread evenly over it instead of where it put them: those suites
 * are small files that run long, so by size they came last, side by side, and waited for each
 * other while the rest of the run was done.
 */
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const ALONE = /^\s*runAlone\(\);/m;

class SpreadAlone extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const alone = [];
    const rest = [];
    for (const t of sorted) (ALONE.test(fs.readFileSync(t.path, 'utf8')) ? alone : rest).push(t);
    if (alone.length === 0 || rest.length === 0) return sorted;
    const out = [];
    const every = rest.length / alone.length;
    let next = 0;
    rest.forEach((t, i) => {
      while (next < alone.length && i >= Math.floor(next * every)) out.push(alone[next++]);
      out.push(t);
    });
    while (next < alone.length) out.push(alone[next++]);
    return out;
  }
}

module.exports = SpreadAlone;
