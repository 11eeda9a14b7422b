/*
 * Hash routes, one view shown at a time (the page is one document, so the token and the poll
 * survive navigation):
 *
 *   #/              overview: charts, this node, cluster counts, nodes, pending transfers
 *   #/streams       streams list          #/stream/<encoded name>   one stream, live tail
 *   #/groups        consumer groups       #/tokens                  tokens
 *   #/schemas       schema registry subjects, versions, compatibility, bound streams
 *   #/cluster       nodes, slots, transfers, lease holder
 *
 * Each view registers `SvcDash.views[name] = {enter(arg), leave()}`; leaving stops its loops.
 */
/* global document, window */
'use strict';

(function () {
  const D = window.SvcDash;
  const views = D.views || {};
  let current = null;

  function parse() {
    const hash = window.location.hash.replace(/^#\/?/, '');
    if (hash === '') return { name: 'overview', arg: null };
    const slash = hash.indexOf('/');
    const head = slash < 0 ? hash : hash.slice(0, slash);
    const rest = slash < 0 ? null : hash.slice(slash + 1);
    if (head === 'stream' && rest) {
      try {
        return { name: 'stream', arg: decodeURIComponent(rest) };
      } catch {
        return { name: 'streams', arg: null };
      }
    }
    return { name: ['streams', 'groups', 'schemas', 'tokens', 'cluster'].includes(head) ? head : 'overview', arg: null };
  }

  function route() {
    const next = parse();
    if (current !== null && views[current.name]) views[current.name].leave();
    for (const v of document.querySelectorAll('.view')) v.hidden = v.dataset.view !== next.name;
    for (const a of document.querySelectorAll('#nav a')) {
      const on = a.dataset.route === next.name || (next.name === 'stream' && a.dataset.route === 'streams');
      if (on) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.body.dataset.view = next.name;
    current = next;
    if (views[next.name]) views[next.name].enter(next.arg);
  }

  window.addEventListener('hashchange', route);
  // A new token may see more or less: re-enter the view, so its buttons follow the new scope.
  document.addEventListener('svc:who', () => {
    if (current !== null && views[current.name]) {
      views[current.name].leave();
      views[current.name].enter(current.arg);
    }
  });
  D.whoami();
  route();
})();
