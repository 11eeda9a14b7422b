'use strict';
/**
 * Version ranges of Kafka's message schemas: "3+", "0-12", "5" or "none"
 * (clients/src/main/resources/common/message/README.md, "Versions"). A range is
 * `[lo, hi]` with `hi = Infinity` for "N+", or null for none.
 */

function parseVersions(spec) {
  if (spec === undefined || spec === 'none') return null;
  let m = /^(\d+)\+$/.exec(spec);
  if (m) return [Number(m[1]), Infinity];
  m = /^(\d+)-(\d+)$/.exec(spec);
  if (m) return [Number(m[1]), Number(m[2])];
  m = /^(\d+)$/.exec(spec);
  if (m) return [Number(m[1]), Number(m[1])];
  throw new Error(`bad version range ${JSON.stringify(spec)}`);
}

/** Intersection of two ranges, or null when they do not meet. */
function intersect(a, b) {
  if (a === null || b === null) return null;
  const lo = Math.max(a[0], b[0]);
  const hi = Math.min(a[1], b[1]);
  return lo <= hi ? [lo, hi] : null;
}

function sameRange(a, b) {
  return a === b || (a !== null && b !== null && a[0] === b[0] && a[1] === b[1]);
}

/** True when `inner` covers every version of `outer`. */
function covers(inner, outer) {
  return inner !== null && inner[0] <= outer[0] && inner[1] >= outer[1];
}

module.exports = { parseVersions, intersect, sameRange, covers };
