/**
 * The node's dashboard: static assets (`index.html`, its scripts and style sheet; the pages are
 * described in docs/dashboard.md) served by the admin listener. `/` answers with `index.html` and
 * `/dashboard/<file>` with an asset; the page itself calls the JSON API (`/ready`, `/admin/…`,
 * `/metrics`) from the browser. The assets
 * need no token (spec "Authentication", modes: the dashboard's static assets are exempt); the
 * API calls do.
 *
 * The folder is read once, at load: only the regular files present then are served, looked up by
 * their exact name, so no request path can reach anything else (no `..`, no percent-decoding, no
 * symlinks followed later). A build without the folder still answers `/` with a short page saying
 * so, because the JSON API works without it.
 *
 * Third-party browser code comes from its pinned npm package, read at load like the folder's files
 * and served beside them (VENDOR below): the charts are uPlot's `dist/uPlot.iife.min.js` and
 * `dist/uPlot.min.css`, served as `/dashboard/uPlot.iife.min.js` and `/dashboard/uPlot.min.css`.
 * Nothing is fetched from a CDN, so the page works offline and under the self-only policy.
 *
 * The default folder is the repository root's `dashboard/`, beside `dist/`. The caller resolves it
 * from its own compiled location: from dist/gateway/admin that is
 *   loadDashboard(path.join(__dirname, '..', '..', '..', 'dashboard'))
 * and from dist/node.js `path.join(__dirname, '..', 'dashboard')` (the same folder; both also hold
 * when run from src/ under ts-jest).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One complete response: status, headers (lower-case names) and body. */
export interface DashboardReply {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer | string;
}

export interface Dashboard {
  /** False when the folder is missing or has no index.html (then `/` serves the hint page). */
  readonly present: boolean;
  /** The response for a GET/HEAD of `path` (raw request path, no query), or null when it is not the dashboard's. */
  serve(path: string): DashboardReply | null;
}

/** Content types by extension; files with other extensions are not served. */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Only this origin's scripts, styles, images and fetches; no inline script or style, no framing,
 * no plugins. The page is a same-origin client of the admin API and needs nothing else.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** A name that needs no percent-encoding in a path and is not hidden: the raw path equals it. */
const SERVABLE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

const HINT_PAGE =
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Svc node</title></head><body>\n' +
  '<h1>Svc node</h1>\n' +
  '<p>This build has no dashboard assets (the <code>dashboard/</code> folder with <code>index.html</code> was not found).</p>\n' +
  '<p>The JSON API still works: <code>/admin/cluster</code>, <code>/admin/nodes</code>, <code>/admin/streams/{stream}</code>, ' +
  '<code>/admin/tokens</code>, and the probes <code>/health</code> and <code>/ready</code>.</p>\n' +
  '</body></html>\n';

function headersFor(type: string): Array<[string, string]> {
  return [
    ['content-type', type],
    // Revalidate every time: a node upgrade must not leave an old app.js in the browser.
    ['cache-control', 'no-cache'],
    ['x-content-type-options', 'nosniff'],
    ['content-security-policy', DASHBOARD_CSP],
    ['referrer-policy', 'no-referrer'],
    ['x-frame-options', 'DENY'],
  ];
}

/** Reads the servable files of `dir` (not its subfolders); an unreadable folder reads as empty. */
function readAssets(dir: string): Map<string, DashboardReply> {
  const assets = new Map<string, DashboardReply>();
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return assets;
  }
  for (const e of entries) {
    const type = TYPES[path.extname(e.name).toLowerCase()];
    if (!e.isFile() || type === undefined || !SERVABLE_NAME.test(e.name)) continue;
    let body: Buffer;
    try {
      body = fs.readFileSync(path.join(dir, e.name));
    } catch {
      continue;
    }
    assets.set(e.name, { status: 200, headers: headersFor(type), body });
  }
  return assets;
}

/** Served name → file inside an npm package (resolved from the package's own package.json). */
const VENDOR: ReadonlyArray<{ pkg: string; file: string; name: string }> = [
  { pkg: 'uplot', file: 'dist/uPlot.iife.min.js', name: 'uPlot.iife.min.js' },
  { pkg: 'uplot', file: 'dist/uPlot.min.css', name: 'uPlot.min.css' },
];

/** Adds the vendored files that are installed; a missing one is left out (the page draws no charts then). */
function readVendor(assets: Map<string, DashboardReply>): void {
  for (const v of VENDOR) {
    try {
      const file = path.join(path.dirname(require.resolve(`${v.pkg}/package.json`)), v.file);
      assets.set(v.name, { status: 200, headers: headersFor(TYPES[path.extname(v.name)]!), body: fs.readFileSync(file) });
    } catch {
      continue;
    }
  }
}

/** Loads the dashboard from `dir` once; see the file comment for the default folder. */
export function loadDashboard(dir: string, opts: { vendor?: boolean } = {}): Dashboard {
  const assets = readAssets(dir);
  if (opts.vendor !== false && assets.has('index.html')) readVendor(assets);
  const index = assets.get('index.html');
  const present = index !== undefined;
  const root: DashboardReply = index ?? { status: 200, headers: headersFor(TYPES['.html']!), body: HINT_PAGE };
  // Without index.html the other files are not a dashboard: serve none of them.
  const byPath = new Map<string, DashboardReply>([['/', root]]);
  if (present) for (const [name, reply] of assets) byPath.set(`/dashboard/${name}`, reply);
  return {
    present,
    serve(p: string): DashboardReply | null {
      const r = byPath.get(p);
      // A fresh header array each time: the caller may add its own headers.
      return r === undefined ? null : { status: r.status, headers: r.headers.map(([k, v]) => [k, v]), body: r.body };
    },
  };
}
