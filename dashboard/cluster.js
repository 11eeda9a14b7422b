/*
 * The cluster page, from what the poll already fetches (GET /admin/cluster and /admin/nodes
 * every 2 s): the overview's facts (lease holder, appliedIndex, counts, and any field a newer
 * node adds; the rebalance in progress as one line), the nodes with their slots (editable with POST /admin/nodes/{id} by a token that
 * may update slots), liveness, opening and placed counts, and the pending transfers. Fields are read
 * defensively: a missing one shows "–", an unknown one is listed as it is.
 *
 * Test hooks: rows `tr[data-cluster-node="<id>"]` with `[data-k]` cells; slot editors
 * `input[data-k="slots-input"]` and `button[data-action="save-slots"]`.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const facts = document.getElementById('cluster-facts');
  const nodeRows = document.getElementById('cluster-node-rows');
  const transferRows = document.getElementById('cluster-transfer-rows');
  const KNOWN = ['nodeId', 'nodeEpoch', 'advertisedAddress', 'live', 'slots', 'openingCount', 'placedCount', 'local'];
  const ORDER = ['clusterId', 'leaseHolder', 'rebalance', 'appliedIndex', 'streamCount', 'objectCount', 'destroyedObjectBacklog', 'nodeId', 'nodeEpoch', 'advertisedAddress', 'registered'];
  const LABEL = { leaseHolder: 'lease holder (this node)', appliedIndex: 'applied index' };
  /** A slot value being edited is not overwritten by the next poll. */
  const editing = new Set();

  async function saveSlots(id, input) {
    const slots = Number(input.value);
    if (!Number.isSafeInteger(slots) || slots < 0) {
      D.note('slots-note', 'Slots are an integer >= 0.');
      return;
    }
    const r = await D.api('POST', '/admin/nodes/' + id, { slots });
    editing.delete(String(id));
    D.note('slots-note', r.status === 200 ? 'Node ' + id + ' now has ' + (r.body ? r.body.slots : slots) + ' slots.' : D.problem(r, 'change slots'));
  }

  /** A node's liveness lease (docs/cluster.md "Liveness"): live, down (streams unavailable), or "–" from a node without the field. */
  function liveness(live) {
    if (live === true) return h('span', { class: 'badge ok' }, 'live');
    if (live === false) return h('span', { class: 'badge bad' }, 'down');
    return D.fmt(live);
  }

  /** The overview's `rebalance` (docs/cluster.md "Rebalance") as one line: mode, and the run in progress or the last one. */
  function rebalanceText(r) {
    const mode = r.auto === true ? 'automatic' : 'on request only';
    if (r.running === true) {
      const now = r.current ? '; moving ' + r.current.stream + ' from node ' + r.current.fromNode + ' to node ' + r.current.toNode : '';
      return mode + '; running: ' + r.done + ' of ' + r.planned + ' moves done' + (r.skipped > 0 ? ', ' + r.skipped + ' skipped' : '') + now;
    }
    return mode + (r.planned > 0 ? '; last run: ' + r.done + ' of ' + r.planned + ' moves done' : '; nothing to move');
  }

  function render() {
    const c = D.last.cluster;
    if (c) {
      const shown = { ...c };
      delete shown.pendingTransfers;
      if (shown.leaseHolder === null) shown.leaseHolder = 'unknown';
      if (shown.rebalance && typeof shown.rebalance === 'object') shown.rebalance = rebalanceText(shown.rebalance);
      D.facts(facts, shown, ORDER, LABEL);
    }
    const canEdit = D.can('update_node_slots');
    const existing = new Map([...nodeRows.querySelectorAll('tr[data-cluster-node]')].map((tr) => [tr.dataset.clusterNode, tr]));
    const nodes = (D.last.nodes || []).filter((n) => n && n.nodeId !== undefined).slice().sort((a, b) => a.nodeId - b.nodeId);
    nodeRows.replaceChildren(
      ...nodes.map((n) => {
        const id = String(n.nodeId);
        const old = existing.get(id);
        if (old && editing.has(id)) return old;
        const extra = Object.fromEntries(Object.entries(n).filter(([k]) => !KNOWN.includes(k)));
        const input = h('input', { type: 'number', min: '0', value: String(n.slots ?? 0), k: 'slots-input', 'aria-label': 'slots of node ' + id });
        input.addEventListener('input', () => editing.add(id));
        const slots = canEdit
          ? h('td', { k: 'slots', class: 'edit' }, input, h('button', { type: 'button', class: 'action', 'data-op': 'update_node_slots', 'data-action': 'save-slots', onclick: () => saveSlots(n.nodeId, input) }, 'Save'))
          : h('td', { k: 'slots' }, D.fmt(n.slots));
        return h(
          'tr',
          { 'data-cluster-node': id, class: n.local === true ? 'local' : '' },
          h('th', { scope: 'row' }, id),
          h('td', { k: 'nodeEpoch' }, D.fmt(n.nodeEpoch)),
          h('td', { k: 'advertisedAddress' }, D.fmt(n.advertisedAddress)),
          h('td', { k: 'live' }, liveness(n.live)),
          slots,
          h('td', { k: 'openingCount' }, D.fmt(n.openingCount)),
          h('td', { k: 'placedCount' }, D.fmt(n.placedCount)),
          h('td', { k: 'local' }, D.fmt(n.local)),
          h('td', { k: 'more', class: 'more' }, Object.keys(extra).length === 0 ? '' : JSON.stringify(extra)),
        );
      }),
    );
    const pending = c && Array.isArray(c.pendingTransfers) ? c.pendingTransfers : [];
    transferRows.replaceChildren(
      ...(pending.length === 0
        ? [h('tr', {}, h('td', { colSpan: 3, k: 'no-transfers' }, 'none'))]
        : pending.map((t) => h('tr', { 'data-transfer': String(t.streamId) }, h('td', {}, D.fmt(t.streamId)), h('td', {}, D.fmt(t.fromNode)), h('td', {}, D.fmt(t.toNode))))),
    );
  }

  const onPoll = () => {
    if (document.body.dataset.view === 'cluster') render();
  };
  D.views.cluster = {
    enter() {
      editing.clear();
      document.addEventListener('svc:poll', onPoll);
      render();
    },
    leave() {
      document.removeEventListener('svc:poll', onPoll);
    },
  };
})();
