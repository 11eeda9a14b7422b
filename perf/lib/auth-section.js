'use strict';
// The "Auth overhead" section of perf/RESULTS.md: written by perf/auth-overhead.js, carried over
// unchanged by perf/run.js when it rewrites the rest of the file.

const START = '<!-- auth-overhead:start -->';
const END = '<!-- auth-overhead:end -->';
const GOAL = 0.95;

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Markdown for one auth-overhead run: per-round figures, the ratio and the goal. */
function authSection({ runs, rounds, duration, connections, date, load, machine }) {
  const of = (mode) => runs.filter((r) => r.mode === mode);
  const ratio = sum(of('required').map((r) => r.rps)) / sum(of('off').map((r) => r.rps));
  // CPU per append, weighted by the appends of each run (total CPU ÷ total appends per side).
  const cpuPer = (mode) => sum(of(mode).map((r) => r.cpuUs * r.rps)) / sum(of(mode).map((r) => r.rps));
  const cpuRatio = cpuPer('required') / cpuPer('off');
  const paired = [];
  for (let i = 1; i <= rounds; i++) {
    const off = runs.find((r) => r.round === i && r.mode === 'off');
    const req = runs.find((r) => r.round === i && r.mode === 'required');
    paired.push(req.rps / off.rps);
  }
  const lines = [
    START,
    '## Auth overhead',
    '',
    'Single-record appends (100 B, one stream, wrk -t1) against `--auth off` and `--auth required` (a bearer ' +
      'token on every request), same build; every measured run gets a fresh node of its own, and the runs ' +
      'alternate off/required, required/off, …. Written by `node perf/auth-overhead.js` (not by `npm run perf`); ' +
      '`PERF_AUTH_CONTROL=1` runs auth off on both sides to show the noise of the method on the machine.',
    '',
    `- date: ${date}; ${machine}; load average (1 min): ${load}`,
    `- ${rounds} rounds × ${duration} s per node, ${connections} connections, after a 2 s warm-up of each`,
    '',
    '| Round | auth off (appends/s) | auth required (appends/s) | required ÷ off | node CPU per append, off / required (µs) |',
    '|---|---|---|---|---|',
  ];
  for (let i = 1; i <= rounds; i++) {
    const off = runs.find((r) => r.round === i && r.mode === 'off');
    const req = runs.find((r) => r.round === i && r.mode === 'required');
    lines.push(`| ${i} | ${Math.round(off.rps)} | ${Math.round(req.rps)} | ${(req.rps / off.rps).toFixed(3)}× | ${off.cpuUs.toFixed(1)} / ${req.cpuUs.toFixed(1)} |`);
  }
  lines.push(
    '',
    `| Goal | Result | Figure |`,
    '|---|---|---|',
    `| auth required costs under 5% of append throughput | **${ratio >= GOAL ? 'PASS' : 'FAIL'}** | required ÷ off = ${ratio.toFixed(3)}× over all rounds (median of rounds ${median(paired).toFixed(3)}×; need ≥ ${GOAL}×) |`,
    '',
    `Node CPU per append (user + system, all threads, from /proc; less disturbed by other work on the machine than the rate): ` +
      `${cpuPer('off').toFixed(1)} µs with auth off, ${cpuPer('required').toFixed(1)} µs with auth required: ` +
      `${((cpuRatio - 1) * 100).toFixed(1)}% more CPU per append with auth.`,
    END,
  );
  return lines.join('\n');
}

/** `md` with its auth section replaced by `section` (appended when it has none). */
function replaceAuthSection(md, section) {
  const a = md.indexOf(START);
  const b = md.indexOf(END);
  if (a >= 0 && b > a) return md.slice(0, a) + section + md.slice(b + END.length);
  return md.replace(/\s*$/, '') + (md.trim() === '' ? '' : '\n\n') + section + '\n';
}

/** The auth section of `md`, or '' (run.js keeps it across its rewrites). */
function existingAuthSection(md) {
  const a = md.indexOf(START);
  const b = md.indexOf(END);
  return a >= 0 && b > a ? md.slice(a, b + END.length) : '';
}

module.exports = { authSection, replaceAuthSection, existingAuthSection };
