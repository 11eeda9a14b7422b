'use strict';
// Turns one run's measurements into perf/RESULTS.md: a header describing the run,
// one table per workload with Svc beside its anchors and Svc ÷ anchor ratio
// columns, and a Goals section whose PASS/FAIL is computed from this run's figures.
// Svc is measured twice: on its own protocol (`svc`) and on its Durable Streams listener
// (`svc-ds`, the same workloads in their DS form); each has its own ratio columns and goals.

const fs = require('node:fs');
const path = require('node:path');
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

/**
 * The product under its two protocols and the anchors each is divided by: `svc` by every other
 * server of the workload, `svc-ds` by the Durable Streams reference server only (like for like:
 * the same protocol, requests and readers).
 */
const PRODUCTS = ['svc', 'svc-ds'];
function anchorsOf(product, w) {
  if (product === 'svc') return w.servers.filter((s) => !PRODUCTS.includes(s));
  return ['ds-mem', 'ds-file'].filter((s) => w.servers.includes(s));
}

/** [product, anchor] ratio columns of a workload's table: a product's columns appear when it was measured. */
function ratioColumns(w, wres) {
  const cols = [];
  for (const p of PRODUCTS) {
    if (!w.servers.includes(p) || !wres || !wres.rows.some((r) => r.server === p)) continue;
    for (const a of anchorsOf(p, w)) cols.push([p, a]);
  }
  return cols;
}

function findRow(wres, server, variant = '') {
  return wres && wres.rows.find((r) => r.server === server && r.variant === variant);
}

/**
 * DS read variant compared with a Svc read format: JSON with the JSON stream, raw and binary with the
 * byte stream. Svc DS reads the same DS streams (json, raw), so it maps onto itself.
 */
const dsVariantFor = (svcFormat) => (svcFormat === 'json' ? 'json' : 'raw');

/** `svcRow`'s headline ÷ the anchor's (the matching read variant for reads); `svcRow` is a Svc or Svc DS row. */
function ratio(wres, kind, svcRow, anchorServer) {
  if (!svcRow) return NaN;
  // The bare read anchor serves Svc's own formats (raw, binary): compared format for format.
  const variant = kind !== 'read' ? '' : anchorServer === 'bare-read' ? svcRow.variant : dsVariantFor(svcRow.variant);
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
  const cols = ratioColumns(w, wres);
  const head = ['Server', isBatch ? 'batches/s' : 'req/s'];
  if (isBatch) head.push('records/s');
  head.push('p50', 'p99', 'errors', ...cols.map(([p, a]) => `${LABELS[p]} ÷ ${LABELS[a]}`));
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
    for (const [p, a] of cols) cells.push(s === p ? fmtRatio(ratio(wres, 'wrk', row, a)) : '');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function readTable(w, wres) {
  const cols = ratioColumns(w, wres);
  const head = ['Server', 'format', 'payload MB/s', 'records/s', 'wire MB/s', 'pages/pass', 'passes', 'server CPU', 'CPU µs / MB', 'CPU ns / record', ...cols.map(([p, a]) => `${LABELS[p]} ÷ ${LABELS[a]}`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  for (const s of w.servers) {
    for (const row of wres.rows.filter((r) => r.server === s)) {
      const variant = row.variant || '';
      if (row.error) {
        lines.push(`| ${LABELS[s]} | ${variant} | FAILED: ${oneLine(row.error)} |${' |'.repeat(head.length - 3)}`);
        continue;
      }
      const cells = [LABELS[s], variant, fmt1(row.payloadMBps), fmtInt(row.recordsPerSec), fmt1(row.wireMBps), fmt1(row.requestsPerPass), String(row.passes), Number.isFinite(row.serverCores) ? `${row.serverCores.toFixed(2)} cores` : '—', fmtInt(row.cpuUsPerMB), fmtInt(row.cpuNsPerRecord)];
      for (const [p, a] of cols) cells.push(s === p ? fmtRatio(ratio(wres, 'read', row, a)) : '');
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

const fmtMs = (ms) => fmtUs(ms * 1000);
const fmtKiB = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : '—');
const fmtMiB = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(0)} MiB` : '—');
const fmtPct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(x >= 0.9995 ? 0 : 2)}%` : '—');

function fanoutErrors(row) {
  const parts = [];
  if (row.dropped) parts.push(`${fmtInt(row.dropped)} dropped`);
  if (row.readerErrors) parts.push(`${fmtInt(row.readerErrors)} reader errors`);
  if (row.closedByServer) parts.push(`${fmtInt(row.closedByServer)} closed`);
  if (row.writeErrors) parts.push(`${fmtInt(row.writeErrors)} append errors`);
  return parts.length ? parts.join(', ') : '0';
}

/** W6: one row per server and mode; the ratios are Svc ÷ DS and Svc DS ÷ DS on p99 latency (lower is better). */
function fanoutTable(w, wres) {
  const products = ratioColumns(w, wres)
    .filter(([, a]) => a === 'ds-mem')
    .map(([p]) => p);
  const head = ['Server', 'readers', 'mode', 'appends/s', 'p50', 'p99', 'max', 'append p50 / p99', 'delivered', 'memory / idle reader', 'peak RSS', 'CPU server / client', 'errors', ...products.map((p) => `p99 ${LABELS[p]} ÷ DS memory`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 || i === 2 ? '---' : '---:')).join('|')}|`];
  for (const s of w.servers) {
    for (const row of wres.rows.filter((r) => r.server === s)) {
      if (row.error) {
        lines.push(`| ${LABELS[s]} | | ${row.variant} | FAILED: ${oneLine(row.error)} |${' |'.repeat(head.length - 4)}`);
        continue;
      }
      const ds = findRow(wres, 'ds-mem', row.variant);
      const ratioCells = products.map((p) => (s === p && ds && !ds.error ? fmtRatio(row.p99 / ds.p99) : ''));
      lines.push(
        `| ${[
          LABELS[s],
          fmtInt(row.readers),
          row.variant,
          `${fmtInt(row.appendsPerSec)} of ${fmtInt(row.ratePerSec)}`,
          fmtMs(row.p50),
          fmtMs(row.p99),
          fmtMs(row.max),
          `${fmtMs(row.appendP50)} / ${fmtMs(row.appendP99)}`,
          fmtPct(row.deliveredShare),
          row.memPerReaderAll === undefined ? fmtKiB(row.memPerReader) : `${fmtKiB(row.memPerReader)} (${fmtKiB(row.memPerReaderAll)})`,
          fmtMiB(row.peakRss),
          `${fmt1(row.serverCpu)} / ${fmt1(row.clientCpu)}`,
          fanoutErrors(row),
          ...ratioCells,
        ].join(' | ')} |`,
      );
    }
  }
  return lines.join('\n');
}

/** Goals stated in the design notes; each evaluated on this run's figures only. */
function goals(results) {
  const out = [];
  const svcFail = (wres, product = 'svc') => {
    const r = wres && wres.rows.find((x) => x.server === product && (x.error || x.badStatus > 0));
    if (!r) return null;
    return r.error ? `${LABELS[product]} failed: ${oneLine(r.error)}` : `${LABELS[product]} answered ${fmtInt(r.badStatus)} requests with non-2xx`;
  };
  function ratioGoal(text, wid, kind, svcVariant, anchor, min, product = 'svc') {
    const wres = results[wid];
    if (!wres) return out.push({ text, status: 'NOT RUN', detail: `${wid} was not part of this run` });
    const fail = svcFail(wres, product);
    const svcRow = findRow(wres, product, svcVariant);
    const anchorRow = findRow(wres, anchor, kind !== 'read' ? '' : anchor === 'bare-read' ? svcVariant : dsVariantFor(svcVariant));
    const r = ratio(wres, kind, svcRow, anchor);
    if (!Number.isFinite(r)) {
      let why = fail;
      if (!why && !svcRow) why = `${LABELS[product]} was not measured`;
      if (!why) why = anchorRow ? `${LABELS[anchor]} failed, no ratio` : `${LABELS[anchor]} was not measured`;
      return out.push({ text, status: svcRow || fail ? 'FAIL' : 'NOT RUN', detail: why });
    }
    const detail = `${LABELS[product]} ÷ ${LABELS[anchor]} = ${fmtRatio(r)} (need ≥ ${min}×)`;
    // Error responses from Svc void the figure, whatever the ratio.
    if (fail) return out.push({ text, status: 'FAIL', detail: `${fail}; ${detail}` });
    out.push({ text, status: r >= min ? 'PASS' : 'FAIL', detail });
  }
  // The goals of the core-path work, each against a ceiling or a figure of the same run. (The
  // older "W1 ≥ 5× DS memory mode" is withdrawn: that mode itself runs far below the HTTP ceiling.)
  ratioGoal('W1: Svc ≥ 50% of bare uWS', 'W1', 'wrk', '', 'bare-uws', 0.5);
  {
    // Spreading appends over 1,000 streams should be nearly free: W2 against Svc's own W1.
    const text = 'W2: Svc over 1,000 streams ≥ 90% of Svc W1';
    const w1 = headline(findRow(results.W1, 'svc'), 'wrk');
    const w2 = headline(findRow(results.W2, 'svc'), 'wrk');
    if (!results.W1 || !results.W2) out.push({ text, status: 'NOT RUN', detail: 'W1 and W2 both need to be part of the run' });
    else if (!Number.isFinite(w1) || !Number.isFinite(w2)) out.push({ text, status: 'FAIL', detail: svcFail(results.W2) || svcFail(results.W1) || 'Svc was not measured' });
    else out.push({ text, status: w2 / w1 >= 0.9 ? 'PASS' : 'FAIL', detail: `W2 ÷ W1 = ${fmtRatio(w2 / w1)} (need ≥ 0.9×)` });
  }
  ratioGoal('W4: Svc raw catch-up (100 B records) ≥ 80% of the bare read ceiling', 'W4', 'read', 'raw', 'bare-read', 0.8);
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
  {
    // W6: the issue's goals, on Svc's rows. A run whose writer fell short of its rate, or whose
    // readers were dropped or missed records, did not carry the load the goal names.
    const wres = results.W6;
    const sse = findRow(wres, 'svc', 'sse');
    const notRun = (text) => out.push({ text, status: 'NOT RUN', detail: 'W6 was not part of this run' });
    const p99Text = 'W6: Svc SSE delivery p99 < 50 ms with 10,000 readers and 1,000 appends/s';
    if (!wres) notRun(p99Text);
    else if (!sse || sse.error) out.push({ text: p99Text, status: sse ? 'FAIL' : 'NOT RUN', detail: sse ? `Svc failed: ${oneLine(sse.error)}` : 'Svc was not measured' });
    else {
      const problems = [];
      if (sse.readers < 10000) problems.push(`only ${fmtInt(sse.readers)} readers`);
      if (sse.appendsPerSec < 0.95 * sse.ratePerSec) problems.push(`the writer reached ${fmtInt(sse.appendsPerSec)} of ${fmtInt(sse.ratePerSec)} appends/s`);
      if (sse.dropped || sse.readerErrors || sse.closedByServer) problems.push(fanoutErrors(sse));
      if (!(sse.deliveredShare >= 0.999)) problems.push(`${fmtPct(sse.deliveredShare)} delivered`);
      const detail = `p99 ${fmtMs(sse.p99)}, p50 ${fmtMs(sse.p50)}` + (problems.length ? `; ${problems.join('; ')}` : '');
      out.push({ text: p99Text, status: sse.p99 < 50 && problems.length === 0 ? 'PASS' : 'FAIL', detail });
    }
    const memText = 'W6: Svc memory per idle reader < 10 KiB (SSE and long-poll)';
    const rows = wres ? wres.rows.filter((r) => r.server === 'svc') : [];
    if (!wres) notRun(memText);
    else if (rows.length === 0 || rows.some((r) => r.error)) {
      out.push({ text: memText, status: rows.length ? 'FAIL' : 'NOT RUN', detail: rows.length ? 'Svc failed: ' + oneLine(rows.find((r) => r.error).error) : 'Svc was not measured' });
    } else {
      // Judged on the larger of the two figures (one more reader; all readers, one-off costs included).
      const figure = (r) => Math.max(r.memPerReader, r.memPerReaderAll ?? 0);
      const worst = Math.max(...rows.map(figure));
      out.push({ text: memText, status: worst < 10 * 1024 ? 'PASS' : 'FAIL', detail: rows.map((r) => `${r.variant} ${fmtKiB(r.memPerReader)} per reader more, ${fmtKiB(r.memPerReaderAll ?? r.memPerReader)} over all`).join('; ') });
    }
  }
  // Svc's Durable Streams listener against its own Svc listener on the same workload: the protocol
  // should cost little over the same storage.
  ratioGoal('W2: Svc DS listener ≥ 90% of the Svc listener', 'W2', 'wrk', '', 'svc', 0.9, 'svc-ds');
  ratioGoal('W4: Svc DS listener raw catch-up ≥ 90% of the Svc listener', 'W4', 'read', 'raw', 'svc', 0.9, 'svc-ds');
  return out;
}

/** The whole RESULTS.md text. */
function renderResults({ meta, workloads, results, order, connections, fanout = {} }) {
  const md = [];
  md.push('<!-- Generated by perf/run.js (`npm run perf`); do not edit by hand. -->');
  md.push('# Svc performance results');
  md.push('');
  md.push('Every table compares Svc with anchors measured in the same run, on the same machine, with the same');
  md.push('load generator settings. Ratios are Svc ÷ anchor on the headline figure (records/s for writes,');
  md.push('payload MB/s for reads): above 1× Svc is faster. "Svc DS" is the same node serving the Durable Streams');
  md.push('protocol (`--protocol ds`), driven exactly like the DS reference server; its ratio columns are Svc DS ÷ DS.');
  md.push('See perf/README.md for what each workload does.');
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
    md.push(
      w.describe
        .replace('{c}', String(connections))
        .replace('{rate}', fmtInt(fanout.rate))
        .replaceAll('{sse}', fmtInt(fanout.readers))
        .replaceAll('{poll}', fmtInt(fanout.pollers)),
    );
    md.push('');
    if (w.kind === 'wrk') md.push(wrkTable(w, wres, wid === 'W3'));
    else if (w.kind === 'fanout') md.push(fanoutTable(w, wres));
    else md.push(readTable(w, wres));
  }
  md.push('');
  md.push('req/s, batches/s and records/s count successful (2xx) responses only; "errors" lists the rest.');
  md.push('Latency columns are wrk\'s per-request percentiles (for W3, per batch). "payload MB/s" counts record');
  md.push('bodies only (10^6 bytes per MB); "wire MB/s" counts response bodies as sent (JSON framing included).');
  md.push('Svc\'s binary format is compared with the DS byte stream (DS has no batch format); Svc json with a DS JSON stream.');
  md.push('"bare read" serves the very pages Svc sent in the same run from memory (bare uWS, no storage work): Svc raw and binary');
  md.push('÷ bare read is the share of the read ceiling Svc keeps. Server CPU is the server process\'s user + system time (all threads,');
  md.push('/proc) over the timed passes: cores busy, CPU µs per MB of payload and CPU ns per record.');
  if (order.includes('W6')) {
    md.push('W6: latency is from an append\'s acknowledgement to the record\'s receipt by a reader, over every (reader, record) pair;');
    md.push('a receipt processed before its acknowledgement counts as 0. "appends/s" is what the writer achieved of its target (at most 128');
    md.push('appends in flight); "append p50 / p99" is the append round trip the writer saw, i.e. how long the server held it back; "delivered"');
    md.push('is the share of (reader, record) pairs received by the end of the drain; CPU is cores busy while the writer ran (server');
    md.push('process incl. its worker threads / the client process, readers and writer together). The client shares the machine\'s cores.');
  }
  md.push('');
  return md.join('\n');
}

/**
 * Put `section` (which starts with `start` and ends with `end`, the markers of a section another
 * script than perf/run.js owns) into perf/RESULTS.md: in place of the one there, or at the end.
 */
function writeResultsSection(start, end, section, title) {
  const file = path.join(__dirname, '..', 'RESULTS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const re = new RegExp(`${start}[\\s\\S]*${end}\\n?`);
  fs.writeFileSync(file, re.test(old) ? old.replace(re, section + '\n') : `${old.trimEnd()}\n\n${section}\n`);
  console.log(`perf: wrote the "${title}" section of perf/RESULTS.md`);
}

module.exports = { renderResults, goals, writeResultsSection };
