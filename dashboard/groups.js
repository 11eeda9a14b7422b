/*
 * Groups of all three kinds (GET /admin/groups, gateway/admin/group-doc.ts): classic and KIP-848
 * consumer groups with their state, members with their assigned partitions, and per partition
 * the committed offset, the partition's end and the lag (end − committed); share groups with
 * their members and per stream the records in flight, waiting for redelivery, and the running
 * totals (acknowledged, redelivered, archived). Refreshed every 2 s while shown.
 *
 * Test hooks: `[data-group="<id>"]` blocks with `data-kind`; offset rows
 * `tr[data-partition="<topic>/<n>"]` with `[data-k="lag"]`; share rows `tr[data-share-stream]`
 * with `[data-k="in-flight"]`, `[data-k="acknowledged"]`, `[data-k="redelivered"]`.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const REFRESH_MS = 2000;
  const list = document.getElementById('group-list');
  let stop = null;

  const assigned = (a) => (Array.isArray(a) && a.length > 0 ? a.map((t) => t.topic + ' [' + (t.partitions || []).join(', ') + ']').join('; ') : '–');
  const KIND = { classic: 'classic', consumer: 'consumer protocol', share: 'share group' };

  function table(head, rows, empty) {
    return h('table', {}, h('thead', {}, h('tr', {}, head.map((t) => h('th', {}, t)))), h('tbody', {}, rows.length === 0 ? h('tr', {}, h('td', { colSpan: head.length }, empty)) : rows));
  }

  function members(g) {
    const ms = Array.isArray(g.members) ? g.members : [];
    const epochs = g.kind !== 'classic';
    const head = ['Member', 'Client', 'Host'].concat(epochs ? ['Epoch'] : [], ['Assigned partitions']);
    const rows = ms.map((m) =>
      h('tr', { 'data-member': m.memberId }, h('td', {}, D.fmt(m.memberId)), h('td', {}, D.fmt(m.clientId)), h('td', {}, D.fmt(m.clientHost)), epochs ? h('td', { k: 'epoch' }, D.fmt(m.memberEpoch)) : null, h('td', { k: 'assignment' }, assigned(m.assignment))),
    );
    return table(head, rows, g.coordinatedHere === false ? 'members are shown by node ' + g.coordinator + ', its coordinator' : 'no members');
  }

  function offsets(g) {
    const os = Array.isArray(g.offsets) ? g.offsets : [];
    const rows = os.map((o) => h('tr', { 'data-partition': o.topic + '/' + o.partition }, h('td', {}, D.fmt(o.topic)), h('td', {}, D.fmt(o.partition)), h('td', { k: 'committed' }, D.fmt(o.committed)), h('td', { k: 'end' }, D.fmt(o.end)), h('td', { k: 'lag' }, D.fmt(o.lag))));
    return table(['Topic', 'Partition', 'Committed', 'End', 'Lag'], rows, 'no committed offsets');
  }

  function sharePartitions(s) {
    const rows = s.partitions.map((p) =>
      h(
        'tr',
        { 'data-share-stream': p.stream },
        h('td', {}, D.fmt(p.stream)),
        h('td', {}, p.topic === null ? '–' : p.topic + '/' + p.partition),
        h('td', { k: 'start' }, D.fmt(p.startOffset)),
        h('td', { k: 'end' }, D.fmt(p.endOffset)),
        h('td', { k: 'lag' }, D.fmt(p.lag)),
        h('td', { k: 'in-flight' }, D.fmt(p.inFlight)),
        h('td', { k: 'pending' }, D.fmt(p.redeliveryPending)),
        h('td', { k: 'acknowledged' }, D.fmt(p.totals.acknowledged)),
        h('td', { k: 'redelivered' }, D.fmt(p.totals.redelivered)),
        h('td', { k: 'archived' }, D.fmt(p.totals.archived)),
      ),
    );
    return table(['Stream', 'Topic/partition', 'Start', 'End', 'Lag', 'In flight', 'To redeliver', 'Acknowledged', 'Redelivered', 'Archived'], rows, 'no stream leased yet');
  }

  function group(g) {
    const share = g.share && Array.isArray(g.share.partitions) ? g.share : null;
    const lag = share ? share.lag : (Array.isArray(g.offsets) ? g.offsets : []).reduce((sum, o) => sum + (typeof o.lag === 'number' ? o.lag : 0), 0);
    const notes = ['total lag ' + lag];
    if (share) notes.push(share.inFlight + ' in flight', share.totals.acknowledged + ' acknowledged', share.totals.redelivered + ' redelivered', share.totals.archived + ' archived');
    if (g.groupEpoch !== null && g.groupEpoch !== undefined) notes.push('epoch ' + g.groupEpoch);
    if (g.coordinatedHere === false) notes.push('coordinated by node ' + g.coordinator);
    return h(
      'div',
      { class: 'group', 'data-group': g.groupId, 'data-kind': g.kind || 'classic' },
      h('h3', {}, g.groupId + ' ', h('span', { class: 'badge', k: 'kind' }, KIND[g.kind] || D.fmt(g.kind)), ' ', h('span', { class: 'badge', k: 'state' }, D.fmt(g.state)), ' ', h('span', { class: 'note', k: 'total-lag' }, notes.join(' · '))),
      members(g),
      share ? sharePartitions(share) : offsets(g),
    );
  }

  async function refresh() {
    const r = await D.api('GET', '/admin/groups');
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.groups)) {
      D.note('groups-note', D.problem(r, 'read groups'));
      return;
    }
    const n = r.body.groups.length;
    D.note('groups-note', n === 0 ? 'No group yet: consumer groups appear when a Kafka client joins or commits, share groups at their first lease.' : n + ' group' + (n === 1 ? '' : 's') + '.');
    list.replaceChildren(...r.body.groups.map(group));
  }

  D.views.groups = {
    enter() {
      stop = D.loop(refresh, REFRESH_MS, () => document.body.dataset.view === 'groups');
    },
    leave() {
      if (stop) stop();
      stop = null;
    },
  };
})();
