/*
 * Shared helpers of the dashboard's views: element building (text only, never HTML), the
 * caller's scope (GET /admin/whoami) and what it allows, and one loop per view that runs only
 * while that view is shown and the tab is visible, so a node nobody looks at serves nothing.
 *
 * Write buttons carry class `action` and `data-op`; a view creates them only when `can(op)` holds,
 * so a read-only token sees none (the node refuses them anyway: this only keeps the page honest).
 */
/* global document, window, CustomEvent */
'use strict';

(function () {
  const D = window.SvcDash;

  /** h('td', {k: 'x', class: 'y'}, 'text', child…): an element; strings become text nodes. */
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'k') e.dataset.k = v;
      else if (k.startsWith('data-')) e.setAttribute(k, v);
      else if (k === 'onclick') e.addEventListener('click', v);
      else if (k in e) e[k] = v;
      else e.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      e.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
    }
    return e;
  }

  /** A value for a cell: numbers and strings as they are, booleans yes/no, objects as compact JSON. */
  function fmt(v) {
    if (v !== null && typeof v === 'object') return JSON.stringify(v);
    return D.show(v);
  }

  const when = (ms) => (typeof ms === 'number' && ms > 0 ? new Date(ms).toLocaleString() : '–');

  /** A <dl> of every scalar or object field of `doc`, in `order` first and then any others (fields added later show up too). */
  function facts(dl, doc, order, label) {
    const keys = [...order.filter((k) => doc && k in doc), ...Object.keys(doc || {}).filter((k) => !order.includes(k))];
    dl.replaceChildren(...keys.flatMap((k) => [h('dt', {}, (label && label[k]) || k), h('dd', { k: 'fact-' + k }, fmt(doc[k]))]));
  }

  // ---- who is asking --------------------------------------------------------------------------
  let who = null;
  let whoPromise = null;

  async function loadWho() {
    const r = await D.api('GET', '/admin/whoami');
    who = r.status === 200 && r.body && typeof r.body === 'object' ? r.body : null;
    const box = document.getElementById('who');
    box.hidden = who === null;
    if (who !== null) {
      box.querySelector('[data-k="who-id"]').textContent = who.id;
      const mode = box.querySelector('[data-k="who-mode"]');
      const rw = canAny();
      mode.textContent = rw ? 'read-write' : 'read-only';
      mode.className = 'badge ' + (rw ? 'ok' : '');
    }
    document.dispatchEvent(new CustomEvent('svc:who'));
    return who;
  }

  function whoami() {
    if (whoPromise === null) whoPromise = loadWho().catch(() => null);
    return whoPromise;
  }

  document.addEventListener('svc:token', () => {
    who = null;
    whoPromise = null;
    whoami();
  });

  /** The group of each write operation (spec "Scope"); reads are not asked about. */
  const GROUP = {
    create: 'stream', append: 'stream', trim: 'stream', close: 'stream', delete: 'stream',
    issue_token: 'tokens', revoke_token: 'tokens',
    transfer_stream: 'admin', update_node_slots: 'admin',
  };

  /** Whether the caller's scope allows write operation `op` through the admin listener. */
  function can(op) {
    if (who === null || !who.scope) return false;
    const s = who.scope;
    if (typeof s.expiresAtMs === 'number' && s.expiresAtMs <= Date.now()) return false;
    const group = GROUP[op];
    return (
      group !== undefined &&
      Array.isArray(s.ops) && s.ops.includes(op) &&
      Array.isArray(s.audiences) && s.audiences.includes('admin') &&
      !!(s.groups && s.groups[group] && s.groups[group].write === true)
    );
  }

  const canAny = () => Object.keys(GROUP).some(can);

  // ---- view loops -----------------------------------------------------------------------------
  /**
   * Runs `fn` now and every `ms` while `isOn()` holds and the tab is visible; one run at a time.
   * Returns stop().
   */
  function loop(fn, ms, isOn) {
    let timer = null;
    let stopped = false;
    async function run() {
      timer = null;
      if (stopped || !isOn()) return;
      // Nothing while the tab is hidden or the page waits for a token.
      if (!document.hidden && document.body.dataset.state !== 'auth') {
        try {
          await fn();
        } catch (err) {
          console.error(err);
        }
      }
      if (!stopped) timer = setTimeout(run, ms);
    }
    run();
    return () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    };
  }

  /** A short status text for a failed call, for the view's note line. */
  function problem(r, what) {
    if (r.status === 403) return 'This token may not ' + what + ' (403).';
    if (r.status === 401) return 'The token was rejected (401).';
    return what + ': ' + r.status + (r.body && r.body.error ? ' ' + r.body.error : '');
  }

  function note(key, text) {
    const n = document.querySelector('[data-k="' + key + '"]');
    if (n !== null && n.textContent !== text) n.textContent = text;
  }

  Object.assign(D, { views: {}, h, fmt, when, facts, whoami, can, canAny, loop, problem, note, who: () => who });
})();
