/*
 * The overview's charts: this node's appends/s, appended bytes/s, reads/s and request latency
 * p99 over the last minutes, drawn with uPlot (served by the node from its pinned npm package).
 *
 * Fed from the node's own Prometheus metrics (GET /metrics on this listener, docs/metrics.md),
 * scraped every 2 s while the overview is shown and the tab is visible, and turned into rates
 * here: the node keeps no history for the page, so an unwatched dashboard costs it nothing.
 *
 *   appends/s  Δ svc_appended_records_total / Δt
 *   bytes/s    Δ svc_appended_bytes_total / Δt
 *   reads/s    Δ svc_http_requests_total{op="read", listener svc|ds} / Δt
 *   p99        of the requests answered in the interval (listeners svc and ds), from the
 *              Δ of svc_http_request_duration_seconds buckets, interpolated in the bucket as
 *              Prometheus' histogram_quantile does
 *   Δt         between the two scrapes' svc_scrape_time_seconds: the node's clock, not the page's
 *
 * Test hooks: `figure[data-chart]` gets `data-points` (points drawn), `data-last` (last value)
 * and `data-max` (highest value shown).
 */
/* global document, window, uPlot */
'use strict';

(function () {
  const D = window.SvcDash;
  const SCRAPE_MS = 2000;
  /** Five minutes of 2 s points. */
  const KEEP = 150;
  const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
  const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

  /** What one scrape says, reduced to the figures the charts need. */
  function reduce(text) {
    const s = { rec: 0, bytes: 0, reads: 0, buckets: new Map(), found: false, at: null };
    for (const line of text.split('\n')) {
      if (line === '' || line[0] === '#') continue;
      const m = LINE.exec(line);
      if (m === null) continue;
      const name = m[1];
      const v = Number(m[3]);
      if (!Number.isFinite(v)) continue;
      if (name === 'svc_scrape_time_seconds') s.at = v * 1000;
      else if (name === 'svc_appended_records_total') {
        s.rec = v;
        s.found = true;
      } else if (name === 'svc_appended_bytes_total') s.bytes = v;
      else if (name === 'svc_http_requests_total' || name === 'svc_http_request_duration_seconds_bucket') {
        const labels = {};
        for (const l of (m[2] || '').matchAll(LABEL)) labels[l[1]] = l[2];
        if (labels.listener !== 'svc' && labels.listener !== 'ds') continue;
        if (name === 'svc_http_requests_total') {
          if (labels.op === 'read') s.reads += v;
        } else {
          const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
          s.buckets.set(le, (s.buckets.get(le) || 0) + v);
        }
      }
    }
    return s;
  }

  /** The q-quantile (seconds) of the requests between two scrapes, or null when there were none. */
  function quantile(q, prev, cur) {
    const les = [...cur.buckets.keys()].sort((a, b) => a - b);
    const d = les.map((le) => (cur.buckets.get(le) || 0) - (prev.buckets.get(le) || 0));
    const total = d[d.length - 1];
    if (!(total > 0)) return null;
    const rank = q * total;
    for (let i = 0; i < les.length; i++) {
      if (d[i] >= rank) {
        if (les[i] === Infinity) return les[i - 1] ?? null;
        const lo = i === 0 ? 0 : les[i - 1];
        const below = i === 0 ? 0 : d[i - 1];
        const inBucket = d[i] - below;
        return inBucket > 0 ? lo + (les[i] - lo) * ((rank - below) / inBucket) : les[i];
      }
    }
    return null;
  }

  const series = { t: [], appends: [], bytes: [], reads: [], p99: [] };
  const plots = {};
  let prev = null;

  function figure(key) {
    return document.querySelector('figure[data-chart="' + key + '"]');
  }

  function draw() {
    const keys = ['appends', 'bytes', 'reads', 'p99'];
    for (const key of keys) {
      const fig = figure(key);
      if (fig === null) continue;
      const data = [series.t, series[key]];
      if (typeof uPlot === 'undefined') {
        D.note('charts-note', '(chart library not installed on this node)');
        return;
      }
      const width = Math.max(240, fig.clientWidth - 4);
      if (!plots[key] || plots[key].width !== width) {
        if (plots[key]) plots[key].destroy();
        plots[key] = new uPlot(
          {
            width,
            height: 150,
            legend: { show: false },
            cursor: { drag: { x: false, y: false } },
            scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
            series: [{}, { label: fig.querySelector('figcaption').textContent, stroke: '#0b5cad', fill: 'rgba(11,92,173,0.12)', width: 1.5, spanGaps: false }],
            axes: [{ stroke: '#888', grid: { stroke: 'rgba(128,128,128,0.15)' } }, { stroke: '#888', grid: { stroke: 'rgba(128,128,128,0.15)' }, size: 60 }],
          },
          data,
          fig,
        );
      } else plots[key].setData(data);
      const points = series[key].filter((v) => v !== null).length;
      fig.dataset.points = String(points);
      const last = series[key][series[key].length - 1];
      fig.dataset.last = last === null || last === undefined ? '' : String(last);
      fig.dataset.max = String(series[key].reduce((m, v) => (v !== null && v > m ? v : m), 0));
    }
  }

  async function scrape() {
    const r = await D.api('GET', '/metrics');
    if (r.status === 404) {
      D.note('charts-note', '(metrics are off on this node: --no-metrics)');
      return;
    }
    if (r.status !== 200) {
      D.note('charts-note', '(' + D.problem(r, 'read the metrics') + ')');
      return;
    }
    // The node's clock at the scrape (svc_scrape_time_seconds): an answer that took long to arrive
    // does not shorten the interval the rates are over. This page's clock only for an older node.
    const reduced = reduce(r.text);
    const cur = { ...reduced, at: reduced.at !== null ? reduced.at : Date.now() };
    if (!cur.found) {
      D.note('charts-note', '(no svc metrics in the scrape)');
      return;
    }
    D.note('charts-note', '');
    if (prev !== null && cur.at > prev.at) {
      const dt = (cur.at - prev.at) / 1000;
      const rate = (a, b) => Math.max(0, (a - b) / dt);
      series.t.push(cur.at / 1000);
      series.appends.push(rate(cur.rec, prev.rec));
      series.bytes.push(rate(cur.bytes, prev.bytes));
      series.reads.push(rate(cur.reads, prev.reads));
      const p99 = quantile(0.99, prev, cur);
      series.p99.push(p99 === null ? null : p99 * 1000);
      for (const k of Object.keys(series)) if (series[k].length > KEEP) series[k].splice(0, series[k].length - KEEP);
    }
    prev = cur;
    draw();
  }

  let stop = null;
  D.views.overview = {
    enter() {
      // A gap in the time axis while the view was away, not a rate over it.
      prev = null;
      stop = D.loop(scrape, SCRAPE_MS, () => document.body.dataset.view === 'overview');
    },
    leave() {
      if (stop) stop();
      stop = null;
    },
  };
  D.chartMath = { reduce, quantile };
})();
