'use strict';
// Turns one run's measurements into perf/RESULTS.md: a header describing the run,
// one table per workload with Svc beside its anchors and Svc ÷ anchor ratio
// columns, and a Goals section whose PASS/FAIL is computed from this run's figures.

const { LABELS } = require('./servers');

const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const fmt1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
function fmtUs(us) {
  if (!Number.isFinite(us)) return '—';
  if (us < 1000) return `${us.toFixed(0)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}
function fmtRatio(r) {
  if (!Number.isFinite(r)) return '—';
  return r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}
const oneLine = (s) => String(s).split('\n')[0].replace(/\|/g, '\\|').slice(0, 160);

/** A row's headline figure: records/s for writes, payload MB/s for reads; NaN if failed or invalid. */
function headline(row, kind) {
  if (!row || row.error) return NaN;
  if (kind === 'wrk') return row.recordsPerSec; // successful responses only (see workloads.js)
  return row.payloadMBps;
}

function findRow(wres, server, variant = '') {
  return wres && wres.rows.find((r) => r.server === server && r.variant === variant);
}

/** DS read variant compared with a Svc read format: JSON with the JSON stream, raw and binary with the byte stream. */
const dsVariantFor = (svcFormat) => (svcFormat === 'json' ? 'json' : 'raw');

function ratio(wres, kind, svcRow, anchorServer) {
  if (!svcRow) return NaN;
  const variant = kind === 'read' ? dsVariantFor(svcRow.variant) : '';
  return headline(svcRow, kind) / headline(findRow(wres, anchorServer, variant), kind);
}

function errorCell(row) {
  const parts = [];
  if (row.badStatus) parts.push(`${fmtInt(row.badStatus)} non-2xx`);
  if (row.socketErrors) parts.push(`${fmtInt(row.socketErrors)} socket`);
  if (row.timeouts) parts.push(`${fmtInt(row.timeouts)} timeouts`);
  return parts.length ? parts.join(', ') : '0';
}

function wrkTable(w, wres, isBatch) {
  const anchors = w.servers.filter((s) => s !== 'svc');
  const head = ['Server', isBatch ? 'batches/s' : 'req/s'];
  if (isBatch) head.push('records/s');
  head.push('p50', 'p99', 'errors', ...anchors.map((a) => `Svc ÷ ${LABELS[a]}`));
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const s of w.servers) {
    const row = findRow(wres, s);
    if (!row) continue;
    if (row.error) {
      lines.push(`| ${LABELS[s]} | FAILED: ${oneLine(row.error)} |${' |'.repeat(head.length - 2)}`);
      continue;
    }
    const cells = [LABELS[s], fmtInt(row.rps)];
    if (isBatch) cells.push(fmtInt(row.recordsPerSec));
    cells.push(fmtUs(row.p50), fmtUs(row.p99), errorCell(row));
    for (const a of anchors) cells.push(s === 'svc' ? fmtRatio(ratio(wres, 'wrk', row, a)) : '');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function readTable(w, wres) {
  const anchors = w.servers.filter((s) => s !== 'svc');
  const head = ['Server', 'format', 'payload MB/s', 'records/s', 'wire MB/s', 'pages/pass', 'passes', ...anchors.map((a) => `Svc ÷ ${LABELS[a]}`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  for (const s of w.servers) {
    for (const row of wres.rows.filter((r) => r.server === s)) {
      const variant = row.variant || '';
      if (row.error) {
        lines.push(`| ${LABELS[s]} | ${variant} | FAILED: ${oneLine(row.error)} |${' |'.repeat(head.length - 3)}`);
        continue;
      }
      const cells = [LABELS[s], variant, fmt1(row.payloadMBps), fmtInt(row.recordsPerSec), fmt1(row.wireMBps), fmt1(row.requestsPerPass), String(row.passes)];
      for (const a of anchors) cells.push(s === 'svc' ? fmtRatio(ratio(wres, 'read', row, a)) : '');
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

/** Goals stated in the design notes; each evaluated on this run's figures only. */
function goals(results) {
  const out = [];
  const svcFail = (wres) => {
    const r = wres && wres.rows.find((x) => x.server === 'svc' && (x.error || x.badStatus > 0));
    if (!r) return null;
    return r.error ? `Svc failed: ${oneLine(r.error)}` : `Svc answered ${fmtInt(r.badStatus)} requests with non-2xx`;
  };
  function ratioGoal(text, wid, kind, svcVariant, anchor, min) {
    const wres = results[wid];
    if (!wres) return out.push({ text, status: 'NOT RUN', detail: `${wid} was not part of this run` });
    const fail = svcFail(wres);
    const svcRow = findRow(wres, 'svc', svcVariant);
    const anchorRow = findRow(wres, anchor, kind === 'read' ? dsVariantFor(svcVariant) : '');
    const r = ratio(wres, kind, svcRow, anchor);
    if (!Number.isFinite(r)) {
      let why = fail;
      if (!why && !svcRow) why = 'Svc was not measured';
      if (!why) why = anchorRow ? `${LABELS[anchor]} failed, no ratio` : `${LABELS[anchor]} was not measured`;
      return out.push({ text, status: svcRow || fail ? 'FAIL' : 'NOT RUN', detail: why });
    }
    const detail = `Svc ÷ ${LABELS[anchor]} = ${fmtRatio(r)} (need ≥ ${min}×)`;
    // Error responses from Svc void the figure, whatever the ratio.
    if (fail) return out.push({ text, status: 'FAIL', detail: `${fail}; ${detail}` });
    out.push({ text, status: r >= min ? 'PASS' : 'FAIL', detail });
  }
  ratioGoal('W1: Svc ≥ 50% of bare uWS', 'W1', 'wrk', '', 'bare-uws', 0.5);
  ratioGoal('W2: Svc ≥ 50% of bare uWS', 'W2', 'wrk', '', 'bare-uws', 0.5);
  ratioGoal('W1: Svc ≥ 5× DS memory mode', 'W1', 'wrk', '', 'ds-mem', 5);
  ratioGoal('W4: Svc raw catch-up (100 B records) ≥ 3× DS memory mode', 'W4', 'read', 'raw', 'ds-mem', 3);
  {
    const text = 'W5: Svc raw catch-up (1 KiB records) ≥ 500 MB/s';
    const wres = results.W5;
    if (!wres) out.push({ text, status: 'NOT RUN', detail: 'W5 was not part of this run' });
    else {
      const v = headline(findRow(wres, 'svc', 'raw'), 'read');
      if (!Number.isFinite(v)) {
        const measured = wres.rows.some((x) => x.server === 'svc');
        out.push({ text, status: measured ? 'FAIL' : 'NOT RUN', detail: svcFail(wres) || 'Svc was not measured' });
      }
      else out.push({ text, status: v >= 500 ? 'PASS' : 'FAIL', detail: `${fmt1(v)} MB/s` });
    }
  }
  return out;
}

/** The whole RESULTS.md text. */
function renderResults({ meta, workloads, results, order, connections }) {
  const md = [];
  md.push('<!-- Generated by perf/run.js (`npm run perf`); do not edit by hand. -->');
  md.push('# Svc performance results');
  md.push('');
  md.push('Every table compares Svc with anchors measured in the same run, on the same machine, with the same');
  md.push('load generator settings. Ratios are Svc ÷ anchor on the headline figure (records/s for writes,');
  md.push('payload MB/s for reads): above 1× Svc is faster. See perf/README.md for what each workload does.');
  md.push('');
  md.push('## Run');
  md.push('');
  for (const [k, v] of meta) md.push(`- ${k}: ${v}`);
  md.push('');
  md.push('## Goals');
  md.push('');
  md.push('| Goal | Result | Figure |');
  md.push('|---|---|---|');
  for (const g of goals(results)) md.push(`| ${g.text} | **${g.status}** | ${g.detail} |`);
  for (const wid of order) {
    const w = workloads[wid];
    const wres = results[wid];
    md.push('');
    md.push(`## ${w.title}`);
    md.push('');
    md.push(w.describe.replace('{c}', String(connections)));
    md.push('');
    if (w.kind === 'wrk') md.push(wrkTable(w, wres, wid === 'W3'));
    else md.push(readTable(w, wres));
  }
  md.push('');
  md.push('req/s, batches/s and records/s count successful (2xx) responses only; "errors" lists the rest.');
  md.push('Latency columns are wrk\'s per-request percentiles (for W3, per batch). "payload MB/s" counts record');
  md.push('bodies only (10^6 bytes per MB); "wire MB/s" counts response bodies as sent (JSON framing included).');
  md.push('Svc\'s binary format is compared with the DS byte stream (DS has no batch format); Svc json with a DS JSON stream.');
  md.push('');
  return md.join('\n');
}

module.exports = { renderResults, goals };
