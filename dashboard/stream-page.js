/*
 * One stream: its detail (GET /admin/streams/{stream}, spec "Stream detail"), its config and
 * schema binding (GET /admin/stream-config/{stream}), a live tail of its records and a transfer
 * form (POST /admin/transfer).
 *
 * Live tail: GET /admin/records/{stream}?from=<next>&limit=100 every 500 ms while the page is
 * shown and the tab visible (so an append shows within a second), starting 20 records before the
 * tail. Newest first; the last 200 are kept. The admin listener answers it same-origin, so the
 * page's self-only policy holds and the token goes in a header as everywhere else.
 *
 * Transfer: the form is shown only to a token that may transfer streams (op transfer_stream). Its
 * button is enabled only when the node reports another node to move the stream to; on a node
 * alone (`/admin/nodes` lists only itself) it is disabled and says why.
 *
 * Test hooks: tail rows are `tr[data-seq]`; `[data-k="tail-state"]`; facts are `[data-k="fact-<field>"]`.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const TAIL_MS = 500;
  const DETAIL_MS = 2000;
  const BACKLOG = 20;
  const KEEP = 200;
  const tailRows = document.getElementById('tail-rows');
  const detail = document.getElementById('stream-detail');
  const config = document.getElementById('stream-config');
  const form = document.getElementById('transfer-form');
  const target = document.getElementById('transfer-target');
  const submit = document.getElementById('transfer-submit');

  let name = null;
  let next = null;
  let last = null;
  let stops = [];

  const path = (n) => encodeURIComponent(n).replace(/%2F/gi, '/');
  const DETAIL_ORDER = ['name', 'streamId', 'state', 'ownerNodeId', 'ownerAdvertisedAddress', 'ownerLocal', 'contentType', 'startOffset', 'endOffset', 'closed', 'ttlSeconds', 'expiresAtMs', 'epoch', 'nodeId', 'pendingTransfer'];
  const CONFIG_ORDER = ['schema', 'schemaValidate', 'schemaDocument', 'kafkaTopic', 'contentType', 'ttlSeconds', 'expiresAtMs', 'idleTtlSeconds', 'createdAtMs', 'fork', 'forkRefs'];

  async function refreshDetail() {
    const asked = name;
    const [d, c] = await Promise.all([D.api('GET', '/admin/streams' + path(name)), D.api('GET', '/admin/stream-config' + path(name))]);
    // The page moved to another stream meanwhile: this answer is about the old one.
    if (asked !== name) return;
    if (d.status === 200 && d.body) {
      last = d.body;
      D.facts(detail, d.body, DETAIL_ORDER);
    } else detail.replaceChildren(h('dt', {}, 'error'), h('dd', { k: 'detail-error' }, D.problem(d, 'inspect this stream')));
    if (c.status === 200 && c.body) {
      const doc = { ...c.body };
      delete doc.name;
      if (typeof doc.createdAtMs === 'number') doc.createdAtMs = D.when(doc.createdAtMs);
      D.facts(config, doc, CONFIG_ORDER);
      // The bound schema's document, indented, so it can be read.
      const dd = config.querySelector('[data-k="fact-schemaDocument"]');
      if (dd !== null && doc.schemaDocument) dd.replaceChildren(h('pre', { class: 'schema' }, JSON.stringify(doc.schemaDocument, null, 2)));
    } else config.replaceChildren(h('dt', {}, 'error'), h('dd', {}, D.problem(c, 'read its config')));
    renderTransfer();
  }

  function renderTransfer() {
    const allowed = D.can('transfer_stream');
    form.hidden = !allowed;
    if (!allowed) {
      D.note('transfer-note', 'This token may not transfer streams.');
      return;
    }
    const owner = last && typeof last.ownerNodeId === 'number' ? last.ownerNodeId : null;
    const others = (D.last.nodes || []).filter((n) => n && typeof n.nodeId === 'number' && n.nodeId !== owner);
    const ids = others.map((n) => String(n.nodeId)).join(',');
    if (target.dataset.ids !== ids) {
      target.dataset.ids = ids;
      target.replaceChildren(...others.map((n) => h('option', { value: String(n.nodeId) }, 'node ' + n.nodeId + (n.advertisedAddress ? ' (' + n.advertisedAddress + ')' : ''))));
    }
    const pending = last && last.pendingTransfer;
    submit.disabled = others.length === 0 || !!pending;
    target.disabled = others.length === 0;
    target.hidden = others.length === 0;
    if (others.length === 0) D.note('transfer-note', 'This node is the only node of the cluster: there is no other node to transfer the stream to.');
    else if (pending) D.note('transfer-note', 'A transfer is pending: ' + JSON.stringify(pending) + '.');
    else if (!form.dataset.done) D.note('transfer-note', '');
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const toNode = Number(target.value);
    const r = await D.api('POST', '/admin/transfer', { stream: name, toNode });
    form.dataset.done = '1';
    D.note('transfer-note', r.status === 200 ? 'Transfer to node ' + toNode + (r.body && r.body.pending ? ' pending.' : ' done.') : D.problem(r, 'transfer this stream'));
  });

  function row(rec) {
    const body = typeof rec.body === 'string' ? rec.body : rec.body === null ? '(null)' : rec.body_b64 !== undefined ? '[base64] ' + rec.body_b64 : '';
    const key = typeof rec.key === 'string' ? rec.key : rec.key_b64 !== undefined ? '[base64] ' + rec.key_b64 : '';
    return h(
      'tr',
      { 'data-seq': String(rec.seq) },
      h('td', { k: 'seq' }, String(rec.seq)),
      h('td', { k: 'time' }, typeof rec.timestamp === 'number' ? new Date(rec.timestamp).toLocaleTimeString() : ''),
      h('td', { k: 'key' }, key.length > 80 ? key.slice(0, 80) + '…' : key),
      h('td', { k: 'body', class: 'body' }, body.length > 300 ? body.slice(0, 300) + '…' : body),
    );
  }

  async function tail() {
    const asked = name;
    if (next === null) {
      const d = await D.api('GET', '/admin/streams' + path(name));
      if (asked !== name) return;
      if (d.status !== 200 || !d.body) {
        D.note('tail-state', D.problem(d, 'inspect this stream'));
        return;
      }
      next = Math.max(Number(d.body.startOffset) || 0, (Number(d.body.endOffset) || 0) - BACKLOG);
    }
    const r = await D.api('GET', '/admin/records' + path(name) + '?from=' + next + '&limit=100');
    if (asked !== name) return;
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.records)) {
      D.note('tail-state', D.problem(r, 'read this stream'));
      return;
    }
    // Trimmed or expired below where the tail was: carry on from the new start.
    if (typeof r.body.nextSeq === 'number') next = Math.max(next, r.body.nextSeq);
    if (r.body.records.length > 0) {
      tailRows.prepend(...r.body.records.slice().reverse().map(row));
      while (tailRows.children.length > KEEP) tailRows.lastElementChild.remove();
    }
    D.note('tail-state', 'live, at seq ' + next + ' (' + tailRows.children.length + ' shown)');
  }

  D.views.stream = {
    enter(arg) {
      if (arg !== name) {
        name = arg;
        next = null;
        last = null;
        tailRows.replaceChildren();
        detail.replaceChildren();
        config.replaceChildren();
        delete form.dataset.done;
      }
      D.note('stream-name', name);
      const on = () => document.body.dataset.view === 'stream';
      stops = [D.loop(refreshDetail, DETAIL_MS, on), D.loop(tail, TAIL_MS, on)];
    },
    leave() {
      for (const s of stops) s();
      stops = [];
    },
  };
})();
