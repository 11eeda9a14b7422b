/*
 * The schema registry (GET /admin/schemas, gateway/admin/schema-api.ts; docs/schema-registry.md
 * "Admin API"): every subject with its versions, the latest version's id and type, its
 * compatibility level and the streams bound to it (a stream schema N is the subject svc-N).
 * Refreshed every 2 s while shown.
 *
 * Test hooks: rows `tr[data-subject="<subject>"]` with `[data-k="versions"]`, `[data-k="id"]`,
 * `[data-k="type"]`, `[data-k="compatibility"]`, `[data-k="streams"]` (links to the stream pages).
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const REFRESH_MS = 2000;
  const body = document.getElementById('subject-rows');
  let stop = null;

  function streams(names) {
    if (!Array.isArray(names) || names.length === 0) return ['–'];
    const out = [];
    names.forEach((n, i) => {
      if (i > 0) out.push(', ');
      out.push(h('a', { href: '#/stream/' + encodeURIComponent(n) }, n));
    });
    return out;
  }

  function row(s) {
    const latest = s.latest || {};
    return h(
      'tr',
      { 'data-subject': s.subject },
      h('td', {}, D.fmt(s.subject)),
      h('td', { k: 'versions' }, Array.isArray(s.versions) ? s.versions.join(', ') : '–'),
      h('td', { k: 'id' }, D.fmt(latest.id)),
      h('td', { k: 'type' }, D.fmt(latest.schemaType)),
      h('td', { k: 'compatibility' }, D.fmt(s.compatibilityLevel)),
      h('td', { k: 'streams' }, ...streams(s.streams)),
    );
  }

  async function refresh() {
    const r = await D.api('GET', '/admin/schemas');
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.subjects)) {
      D.note('schemas-note', D.problem(r, 'read the schema registry'));
      return;
    }
    const n = r.body.subjects.length;
    D.note('schemas-note', (n === 0 ? 'No subject yet.' : n + ' subject' + (n === 1 ? '' : 's') + '.') + ' Global compatibility ' + r.body.compatibilityLevel + ', mode ' + r.body.mode + '.');
    body.replaceChildren(...(n === 0 ? [h('tr', {}, h('td', { colSpan: 6 }, 'no subjects'))] : r.body.subjects.map(row)));
  }

  D.views.schemas = {
    enter() {
      stop = D.loop(refresh, REFRESH_MS, () => document.body.dataset.view === 'schemas');
    },
    leave() {
      if (stop) stop();
      stop = null;
    },
  };
})();
