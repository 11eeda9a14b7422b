/*
 * Svc node dashboard. Polls this admin listener's JSON API every 2 s (spec "Limits"):
 *
 *   GET /ready           readiness: ready, serving, registered, appliedIndex, nodeId (200 or 503)
 *   GET /admin/cluster   this node's identity and the cluster counts
 *   GET /admin/nodes     {nodes: [...]}
 *
 * With a token in this tab's session storage (key `svc.token`) every call carries
 * `Authorization: Bearer <token>`. A 401 or 403 from the admin API stops polling and shows the
 * token form (spec "Client behaviour": prompt on rejection, keep the token for the tab); a new
 * token resumes polling. Values are written with textContent only, never as HTML.
 *
 * The other views (ui.js, charts.js, streams.js, stream-page.js, groups.js, tokens.js,
 * cluster.js, router.js) share this file's token and poll through `window.SvcDash`: `api()` for
 * their own calls, `last` for what the poll saw, and the document events `svc:poll` (after every
 * successful poll) and `svc:token` (the token changed).
 *
 * Test hooks: `[data-field="<name>"]` holds a value (names as in the JSON documents), node rows
 * are `tr[data-node-id="<id>"]` with their own `[data-field]` cells, `body[data-state]` is
 * loading | ok | auth | unreachable | error.
 */
/* global document, sessionStorage, window, CustomEvent */
'use strict';

(function () {
  const POLL_MS = 2000;
  const TIMEOUT_MS = 4000;
  const TOKEN_KEY = 'svc.token';
  const DASH = '–';

  const $ = (sel, root) => (root || document).querySelector(sel);
  const el = {
    prompt: $('#token-prompt'),
    form: $('#token-form'),
    input: $('#token-input'),
    message: $('#token-message'),
    forget: $('#token-forget'),
    error: $('#error'),
    title: $('#title-node'),
    readiness: $('#readiness'),
    refreshed: $('[data-field="lastRefresh"]'),
    identity: $('#identity'),
    cluster: $('#cluster'),
    nodeRows: $('#node-rows'),
    transfers: $('[data-field="pendingTransfers"]'),
    transferTable: $('#transfer-table'),
    transferRows: $('#transfer-rows'),
    main: $('main'),
  };

  let timer = null;
  let running = false;
  let again = false;
  let prompting = false;
  let refreshes = 0;
  /** Bumped whenever the token changes: answers to polls sent with the old one are dropped. */
  let generation = 0;

  function readToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  }

  function writeToken(t) {
    try {
      if (t === null) sessionStorage.removeItem(TOKEN_KEY);
      else sessionStorage.setItem(TOKEN_KEY, t);
    } catch {
      // Storage disabled: the token lives only as long as this page.
    }
    memoryToken = t;
  }
  let memoryToken = readToken();
  const token = () => readToken() ?? memoryToken;

  function show(v) {
    if (v === null || v === undefined) return DASH;
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    return String(v);
  }

  function set(root, field, v) {
    const node = root.querySelector('[data-field="' + field + '"]');
    if (node === null) return;
    const s = show(v);
    if (node.textContent !== s) node.textContent = s;
  }

  function setState(s) {
    document.body.dataset.state = s;
  }

  function showError(msg) {
    el.error.textContent = msg;
    el.error.hidden = false;
  }

  function clearError() {
    el.error.hidden = true;
    el.error.textContent = '';
  }

  async function get(path, signal, tok) {
    const headers = { accept: 'application/json' };
    if (tok) headers.authorization = 'Bearer ' + tok;
    const res = await fetch(path, { headers, signal, cache: 'no-store', credentials: 'omit' });
    let body;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    return { path, status: res.status, body: body !== null && typeof body === 'object' ? body : null };
  }

  const describe = (r) => 'GET ' + r.path + ': ' + r.status + (r.body && typeof r.body.error === 'string' ? ' ' + r.body.error : '');

  function renderReady(r) {
    const ready = r.ready === true;
    el.readiness.textContent = ready ? 'ready' : 'not ready';
    el.readiness.className = 'badge ' + (ready ? 'ok' : 'bad');
    set(el.identity, 'nodeId', r.nodeId);
    set(el.identity, 'serving', r.serving);
    set(el.identity, 'registered', r.registered);
    set(el.cluster, 'appliedIndex', r.appliedIndex);
    if (r.nodeId !== undefined) {
      el.title.textContent = String(r.nodeId);
      document.title = 'Svc node ' + r.nodeId;
    }
  }

  function renderCluster(c) {
    for (const f of ['nodeId', 'nodeEpoch', 'advertisedAddress', 'clusterId', 'registered']) set(el.identity, f, c[f]);
    set(el.identity, 'leaseHolder', c.leaseHolder === null ? 'unknown' : c.leaseHolder);
    for (const f of ['streamCount', 'objectCount', 'destroyedObjectBacklog', 'appliedIndex']) set(el.cluster, f, c[f]);
    const pending = Array.isArray(c.pendingTransfers) ? c.pendingTransfers : [];
    el.transfers.textContent = pending.length === 0 ? 'none' : pending.length + ' pending';
    el.transferTable.hidden = pending.length === 0;
    el.transferRows.replaceChildren(
      ...pending.map((t) => {
        const tr = document.createElement('tr');
        tr.dataset.streamId = String(t.streamId);
        for (const f of ['streamId', 'fromNode', 'toNode']) tr.append(cell(f, t[f]));
        return tr;
      }),
    );
  }

  function cell(field, v, tag) {
    const td = document.createElement(tag || 'td');
    if (field !== null) td.dataset.field = field;
    td.textContent = show(v);
    return td;
  }

  const NODE_FIELDS = ['nodeEpoch', 'advertisedAddress', 'live', 'slots', 'openingCount', 'placedCount', 'local'];

  /** Updates the node table in place (rows keyed by node id), so it does not flicker. */
  function renderNodes(list) {
    const nodes = (Array.isArray(list) ? list : []).slice().sort((a, b) => a.nodeId - b.nodeId);
    const existing = new Map();
    for (const tr of el.nodeRows.querySelectorAll('tr[data-node-id]')) existing.set(tr.dataset.nodeId, tr);
    const rows = nodes.map((n) => {
      const id = String(n.nodeId);
      let tr = existing.get(id);
      if (tr === undefined) {
        tr = document.createElement('tr');
        tr.dataset.nodeId = id;
        const th = cell(null, n.nodeId, 'th');
        th.scope = 'row';
        tr.append(th, ...NODE_FIELDS.map((f) => cell(f, null)));
      }
      for (const f of NODE_FIELDS) set(tr, f, n[f]);
      tr.classList.toggle('local', n.local === true);
      return tr;
    });
    el.nodeRows.replaceChildren(...rows);
  }

  function refreshed() {
    const now = new Date();
    el.refreshed.textContent = now.toLocaleTimeString();
    el.refreshed.dateTime = now.toISOString();
    document.body.dataset.refreshes = String(++refreshes);
  }

  function ask(status, sent) {
    prompting = true;
    if (status === 401 && sent) {
      writeToken(null);
      tokenChanged();
    }
    el.message.textContent =
      status === 403
        ? 'This token may not read the cluster: it needs the admin audience. Enter another token.'
        : sent
          ? 'The token was rejected (unknown, expired or revoked). Enter a new token.'
          : 'This node requires a bearer token with the admin audience.';
    el.forget.hidden = token() === null;
    el.prompt.hidden = false;
    setState('auth');
    clearError();
    el.input.focus();
  }

  /** One round of the three calls; renders what came back. */
  async function poll() {
    const gen = generation;
    const tok = token();
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), TIMEOUT_MS);
    let results;
    try {
      results = await Promise.all(['/ready', '/admin/cluster', '/admin/nodes'].map((p) => get(p, ac.signal, tok)));
    } catch (err) {
      if (gen !== generation) return;
      const why = err && err.name === 'AbortError' ? 'no answer in ' + TIMEOUT_MS / 1000 + ' s' : String((err && err.message) || err);
      const last = el.refreshed.dateTime ? ' Showing data from ' + el.refreshed.textContent + '.' : '';
      showError('Node unreachable (' + why + ').' + last);
      el.main.classList.add('stale');
      el.readiness.textContent = 'unreachable';
      el.readiness.className = 'badge bad';
      setState('unreachable');
      return;
    } finally {
      clearTimeout(t);
    }
    if (gen !== generation) return;
    const [ready, cluster, nodes] = results;
    if (ready.body !== null && (ready.status === 200 || ready.status === 503)) renderReady(ready.body);
    const rejected = [cluster, nodes].find((r) => r.status === 401 || r.status === 403);
    if (rejected !== undefined) {
      ask(rejected.status, tok);
      return;
    }
    const problems = [];
    if (ready.status !== 200 && ready.status !== 503) problems.push(describe(ready));
    if (cluster.status === 200 && cluster.body !== null) renderCluster(cluster.body);
    else problems.push(describe(cluster));
    if (nodes.status === 200 && nodes.body !== null) renderNodes(nodes.body.nodes);
    else problems.push(describe(nodes));
    shared.last = {
      ready: ready.body,
      cluster: cluster.status === 200 ? cluster.body : null,
      nodes: nodes.status === 200 && nodes.body !== null && Array.isArray(nodes.body.nodes) ? nodes.body.nodes : [],
    };
    document.dispatchEvent(new CustomEvent('svc:poll'));
    el.main.classList.remove('stale');
    refreshed();
    if (problems.length > 0) {
      showError(problems.join('; '));
      setState('error');
    } else {
      clearError();
      setState('ok');
    }
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(tick, ms);
  }

  /** The poll loop: one poll at a time, each POLL_MS after the previous one started. */
  async function tick() {
    clearTimeout(timer);
    timer = null;
    if (running) {
      again = true;
      return;
    }
    if (prompting) return;
    running = true;
    const started = Date.now();
    try {
      await poll();
    } finally {
      running = false;
    }
    if (prompting) return;
    if (again) {
      again = false;
      schedule(0);
    } else {
      schedule(Math.max(0, POLL_MS - (Date.now() - started)));
    }
  }

  /** One admin API call with the tab's token: {status, body} (body parsed when JSON). */
  async function api(method, path, body) {
    const headers = { accept: 'application/json' };
    const tok = token();
    if (tok) headers.authorization = 'Bearer ' + tok;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
    const text = await res.text();
    let parsed = null;
    if ((res.headers.get('content-type') || '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    return { status: res.status, body: parsed, text };
  }

  const shared = { api, token, show, last: { ready: null, cluster: null, nodes: [] } };
  window.SvcDash = shared;
  const tokenChanged = () => document.dispatchEvent(new CustomEvent('svc:token'));

  el.form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const value = el.input.value.trim().replace(/^Bearer\s+/i, '');
    if (value === '') return;
    writeToken(value);
    el.input.value = '';
    generation++;
    prompting = false;
    el.prompt.hidden = true;
    el.forget.hidden = false;
    setState('loading');
    tokenChanged();
    tick();
  });

  el.forget.addEventListener('click', () => {
    writeToken(null);
    generation++;
    el.forget.hidden = true;
    prompting = false;
    el.prompt.hidden = true;
    tokenChanged();
    tick();
  });

  el.forget.hidden = token() === null;
  tick();
})();
