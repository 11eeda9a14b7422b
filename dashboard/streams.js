/*
 * The streams list: GET /admin/streams?prefix=&start_after=&limit= (gateway/admin/dashboard-api.ts),
 * 50 a page, refreshed every 2 s while shown. Search is by name prefix (the node lists names in
 * order, so a prefix is what it can answer without scanning everything); pages go forward with
 * `start_after` and back through the cursors already seen.
 *
 * Size is the stream's record count (next seq − start seq); the rate is records/s between two
 * refreshes of the same page, over the node's clock at each listing (`listedAtMs`; the node keeps
 * no per-stream rate: that would be a per-stream cost).
 *
 * Test hooks: rows are `tr[data-stream="<name>"]` with `[data-k]` cells.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const PAGE = 50;
  const REFRESH_MS = 2000;
  const rows = document.getElementById('stream-rows');
  const input = document.getElementById('stream-prefix');
  const prevBtn = document.getElementById('streams-prev');
  const nextBtn = document.getElementById('streams-next');

  let prefix = '/';
  /** start_after of each page seen: cursors[0] = '' (first page). */
  let cursors = [''];
  let nextCursor = null;
  /** name → {seq, at} from the previous refresh, for the rate. */
  let seen = new Map();
  let stop = null;
  /** Bumped by every search and page change: an answer to an earlier listing is dropped, not drawn over the new one. */
  let generation = 0;

  const ttl = (s) => (s.ttlSeconds !== null && s.ttlSeconds !== undefined ? s.ttlSeconds + ' s' : s.expiresAtMs ? 'until ' + D.when(s.expiresAtMs) : '–');

  async function refresh() {
    const q = new URLSearchParams({ prefix, limit: String(PAGE) });
    const after = cursors[cursors.length - 1];
    if (after !== '') q.set('start_after', after);
    const gen = generation;
    const r = await D.api('GET', '/admin/streams?' + q.toString());
    if (gen !== generation) return;
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.streams)) {
      D.note('streams-note', D.problem(r, 'list streams'));
      return;
    }
    // The node's clock at the listing (as the charts use the scrape's): the browser's would count
    // how long each answer took to arrive as time the streams were written in.
    const now = typeof r.body.listedAtMs === 'number' ? r.body.listedAtMs : Date.now();
    const nextSeen = new Map();
    rows.replaceChildren(
      ...r.body.streams.map((s) => {
        const end = Number(s.endOffset);
        const was = seen.get(s.name);
        const rate = was !== undefined && now > was.at ? Math.max(0, (end - was.seq) / ((now - was.at) / 1000)) : null;
        nextSeen.set(s.name, { seq: end, at: now });
        return h(
          'tr',
          { 'data-stream': s.name },
          h('th', { scope: 'row' }, h('a', { href: '#/stream/' + encodeURIComponent(s.name), k: 'name' }, s.name)),
          h('td', { k: 'records' }, D.fmt(end - Number(s.startOffset))),
          h('td', { k: 'rate' }, rate === null ? '…' : rate.toFixed(1)),
          h('td', { k: 'startOffset' }, D.fmt(s.startOffset)),
          h('td', { k: 'endOffset' }, D.fmt(s.endOffset)),
          h('td', { k: 'closed' }, D.fmt(s.closed)),
          h('td', { k: 'ttl' }, ttl(s)),
          h('td', { k: 'contentType' }, D.fmt(s.contentType)),
          h('td', { k: 'created' }, D.when(s.createdAtMs)),
        );
      }),
    );
    seen = nextSeen;
    nextCursor = r.body.hasMore ? r.body.nextStartAfter : null;
    nextBtn.disabled = nextCursor === null;
    prevBtn.disabled = cursors.length <= 1;
    D.note('streams-page', 'page ' + cursors.length);
    D.note('streams-note', r.body.streams.length === 0 ? 'No stream ' + (prefix === '/' ? 'yet.' : 'starts with ' + prefix + '.') : '');
  }

  function restart() {
    if (stop) stop();
    generation++;
    seen = new Map();
    stop = D.loop(refresh, REFRESH_MS, () => document.body.dataset.view === 'streams');
  }

  document.getElementById('stream-search').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = input.value.trim();
    prefix = v === '' ? '/' : v.startsWith('/') ? v : '/' + v;
    cursors = [''];
    restart();
  });
  nextBtn.addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors.push(nextCursor);
    restart();
  });
  prevBtn.addEventListener('click', () => {
    if (cursors.length > 1) cursors.pop();
    restart();
  });

  D.views.streams = {
    enter: restart,
    leave() {
      if (stop) stop();
      stop = null;
    },
  };
})();
