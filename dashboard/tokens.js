/*
 * Tokens: the list (GET /admin/tokens: the records this token may see), revoke
 * (DELETE /admin/tokens/{id}) and issue (POST /admin/tokens) with a scope editor that cannot
 * widen: it offers only the operations, groups and audiences the caller's own scope has
 * (GET /admin/whoami), its stream prefix must lie inside one of the caller's, and its expiry
 * never passes the caller's. The node checks the same rule (403 when a scope would widen);
 * the editor just never builds such a scope. The new wire token is shown once.
 *
 * Test hooks: rows `tr[data-token-id]`, revoke buttons `button[data-action="revoke"]`.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const h = D.h;
  const REFRESH_MS = 5000;
  const rows = document.getElementById('token-rows');
  const box = document.getElementById('issue-box');
  const form = document.getElementById('issue-form');
  const issued = document.getElementById('issued');
  const READ_OPS = ['read', 'head', 'list', 'list_tokens', 'cluster_read', 'node_read', 'stream_inspect'];
  let stop = null;

  const matchers = (list) => (Array.isArray(list) ? list.map((m) => ('prefix' in m ? m.prefix + '*' : m.exact)).join(', ') : '–');

  async function refresh() {
    const r = await D.api('GET', '/admin/tokens');
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.tokens)) {
      D.note('tokens-note', D.problem(r, 'list tokens'));
      return;
    }
    const canRevoke = D.can('revoke_token');
    rows.replaceChildren(
      ...r.body.tokens.map((t) => {
        const s = t.scope || {};
        return h(
          'tr',
          { 'data-token-id': t.id },
          h('th', { scope: 'row', k: 'id' }, t.id),
          h('td', { k: 'streams' }, matchers(s.streams)),
          h('td', { k: 'ops' }, Array.isArray(s.ops) ? s.ops.join(' ') : '–'),
          h('td', { k: 'audiences' }, Array.isArray(s.audiences) ? s.audiences.join(' ') : '–'),
          h('td', { k: 'expires' }, s.expiresAtMs ? D.when(s.expiresAtMs) : 'never'),
          h('td', { k: 'created' }, D.when(t.createdAtMs)),
          h('td', { k: 'issuedBy' }, D.fmt(t.issuedBy)),
          h('td', {}, canRevoke ? h('button', { type: 'button', class: 'action danger', 'data-op': 'revoke_token', 'data-action': 'revoke', onclick: () => revoke(t.id) }, 'Revoke') : null),
        );
      }),
    );
    D.note('tokens-note', r.body.tokens.length + ' token' + (r.body.tokens.length === 1 ? '' : 's') + ' visible to this token.');
  }

  async function revoke(id) {
    if (!window.confirm('Revoke token ' + id + '? Requests with it fail from the next one on.')) return;
    const r = await D.api('DELETE', '/admin/tokens/' + encodeURIComponent(id));
    D.note('tokens-note', r.status === 204 ? 'Token ' + id + ' revoked.' : D.problem(r, 'revoke ' + id));
    await refresh();
  }

  const check = (name, value, label, checked) => h('label', {}, h('input', { type: 'checkbox', name, value, checked }), ' ' + label);

  /** Builds the editor from the caller's scope: only what it has can be chosen. */
  function buildEditor(scope) {
    const ops = Array.isArray(scope.ops) ? scope.ops : [];
    document.getElementById('issue-ops').replaceChildren(...ops.map((op) => check('op', op, op, READ_OPS.includes(op) && op !== 'list_tokens')));
    const groups = scope.groups || {};
    document.getElementById('issue-groups').replaceChildren(
      ...Object.keys(groups).flatMap((g) => [
        groups[g] && groups[g].read ? check('group-read', g, g + ' read', g === 'stream') : null,
        groups[g] && groups[g].write ? check('group-write', g, g + ' write', false) : null,
      ]),
    );
    const auds = Array.isArray(scope.audiences) ? scope.audiences : [];
    document.getElementById('issue-audiences').replaceChildren(...auds.map((a) => check('audience', a, a, a !== 'admin')));
    const first = (scope.streams || []).find((m) => 'prefix' in m);
    document.getElementById('issue-streams').value = first ? first.prefix : '';
    document.getElementById('issue-streams').placeholder = matchers(scope.streams);
  }

  /** The scope for the form's choices, never wider than `mine`; or an error string. */
  function scopeFrom(mine) {
    const picked = (n) => [...form.querySelectorAll('input[name="' + n + '"]:checked')].map((i) => i.value);
    const prefix = document.getElementById('issue-streams').value;
    const inside = (mine.streams || []).some((m) => ('prefix' in m ? prefix.startsWith(m.prefix) : false));
    const exact = (mine.streams || []).some((m) => 'exact' in m && m.exact === prefix);
    if (!inside && !exact) return 'The stream prefix must start with one of this token\'s own: ' + matchers(mine.streams);
    const groups = {};
    for (const g of Object.keys(mine.groups || {})) groups[g] = { read: picked('group-read').includes(g), write: picked('group-write').includes(g) };
    const ops = picked('op');
    const hours = document.getElementById('issue-expiry').value;
    let expiresAtMs = hours === '' ? null : Date.now() + Number(hours) * 3600 * 1000;
    if (typeof mine.expiresAtMs === 'number') expiresAtMs = expiresAtMs === null ? mine.expiresAtMs : Math.min(expiresAtMs, mine.expiresAtMs);
    const scope = {
      streams: [inside ? { prefix } : { exact: prefix }],
      tokens: ops.some((o) => o.endsWith('_token') || o === 'list_tokens') ? mine.tokens || [] : [],
      groups,
      ops,
      audiences: picked('audience'),
      expiresAtMs,
    };
    if (mine.autoPrefixStreams === true) scope.autoPrefixStreams = true;
    return scope;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const who = D.who();
    if (who === null) return;
    const scope = scopeFrom(who.scope || {});
    if (typeof scope === 'string') {
      D.note('issue-note', scope);
      return;
    }
    const id = document.getElementById('issue-id').value.trim();
    const r = await D.api('POST', '/admin/tokens', { id, scope });
    if (r.status === 201 && r.body) {
      D.note('issue-note', 'Token ' + id + ' issued.');
      D.note('issued-token', r.body.token);
      issued.hidden = false;
      document.getElementById('issue-id').value = '';
      await refresh();
    } else {
      issued.hidden = true;
      D.note('issue-note', r.status === 409 ? 'A token with id ' + id + ' exists.' : D.problem(r, 'issue this token'));
    }
  });

  D.views.tokens = {
    enter() {
      const who = D.who();
      box.hidden = !D.can('issue_token') || who === null;
      if (!box.hidden) buildEditor(who.scope || {});
      issued.hidden = true;
      stop = D.loop(refresh, REFRESH_MS, () => document.body.dataset.view === 'tokens');
    },
    leave() {
      if (stop) stop();
      stop = null;
    },
  };
})();
