/*
 * Kafka consumer groups (GET /admin/groups, gateway/admin/dashboard-api.ts): each group's state,
 * its members with their assigned partitions, and per partition the committed offset, the
 * partition's end and the lag (end − committed). Refreshed every 2 s while shown.
 *
 * Test hooks: `[data-group="<id>"]` blocks; offset rows `tr[data-partition="<topic>/<n>"]` with
 * `[data-k="lag"]`.
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

  function group(g) {
    const members = Array.isArray(g.members) ? g.members : [];
    const offsets = Array.isArray(g.offsets) ? g.offsets : [];
    const lag = offsets.reduce((sum, o) => sum + (typeof o.lag === 'number' ? o.lag : 0), 0);
    return h(
      'div',
      { class: 'group', 'data-group': g.groupId },
      h('h3', {}, g.groupId + ' ', h('span', { class: 'badge', k: 'state' }, D.fmt(g.state)), ' ', h('span', { class: 'note', k: 'total-lag' }, 'total lag ' + lag)),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Member'), h('th', {}, 'Client'), h('th', {}, 'Host'), h('th', {}, 'Assigned partitions'))),
        h('tbody', {}, members.length === 0 ? h('tr', {}, h('td', { colSpan: 4 }, 'no members')) : members.map((m) => h('tr', { 'data-member': m.memberId }, h('td', {}, D.fmt(m.memberId)), h('td', {}, D.fmt(m.clientId)), h('td', {}, D.fmt(m.clientHost)), h('td', { k: 'assignment' }, assigned(m.assignment))))),
      ),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Topic'), h('th', {}, 'Partition'), h('th', {}, 'Committed'), h('th', {}, 'End'), h('th', {}, 'Lag'))),
        h('tbody', {}, offsets.length === 0 ? h('tr', {}, h('td', { colSpan: 5 }, 'no committed offsets')) : offsets.map((o) => h('tr', { 'data-partition': o.topic + '/' + o.partition }, h('td', {}, D.fmt(o.topic)), h('td', {}, D.fmt(o.partition)), h('td', { k: 'committed' }, D.fmt(o.committed)), h('td', { k: 'end' }, D.fmt(o.end)), h('td', { k: 'lag' }, D.fmt(o.lag))))),
      ),
    );
  }

  async function refresh() {
    const r = await D.api('GET', '/admin/groups');
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.groups)) {
      D.note('groups-note', D.problem(r, 'read consumer groups'));
      return;
    }
    if (r.body.kafka === false) D.note('groups-note', 'This node runs no Kafka listener, so it has no consumer groups.');
    else D.note('groups-note', r.body.groups.length === 0 ? 'No consumer group yet.' : r.body.groups.length + ' group' + (r.body.groups.length === 1 ? '' : 's') + '.');
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
