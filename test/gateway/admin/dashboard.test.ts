/**
 * The dashboard's static serving (src/gateway/admin/dashboard.ts): what it serves, with which
 * headers, that nothing outside the files present at load can be reached, and the hint page of a
 * build without assets. The page itself runs in a real browser in dashboard.browser.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DASHBOARD_CSP, type DashboardReply, loadDashboard } from '../../../src/gateway/admin/dashboard';

const REPO_DASHBOARD = path.resolve(__dirname, '..', '..', '..', 'dashboard');
const dirs: string[] = [];

function assetDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-dashboard-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), body);
  }
  return dir;
}

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const header = (r: DashboardReply | null, name: string): string | undefined => r?.headers.find(([k]) => k === name)?.[1];
const text = (r: DashboardReply | null): string => (r === null ? '' : r.body.toString());

describe('loadDashboard', () => {
  const dir = assetDir({
    'index.html': '<!doctype html><title>t</title>',
    'app.js': 'console.log(1)',
    'style.css': 'body{}',
    '.hidden.js': 'secret',
    'notes.md': 'not an asset type',
    'sub/deep.js': 'nested',
  });
  fs.writeFileSync(path.join(path.dirname(dir), `${path.basename(dir)}-outside.txt`), 'outside');
  dirs.push(path.join(path.dirname(dir), `${path.basename(dir)}-outside.txt`));
  const d = loadDashboard(dir);

  it('serves index.html at / and the assets under /dashboard/ with their content types', () => {
    expect(d.present).toBe(true);
    const root = d.serve('/');
    expect(root?.status).toBe(200);
    expect(header(root, 'content-type')).toBe('text/html; charset=utf-8');
    expect(text(root)).toBe('<!doctype html><title>t</title>');
    expect(header(d.serve('/dashboard/app.js'), 'content-type')).toBe('text/javascript; charset=utf-8');
    expect(text(d.serve('/dashboard/app.js'))).toBe('console.log(1)');
    expect(header(d.serve('/dashboard/style.css'), 'content-type')).toBe('text/css; charset=utf-8');
    expect(header(d.serve('/dashboard/index.html'), 'content-type')).toBe('text/html; charset=utf-8');
  });

  it('sends no-cache, nosniff and a self-only content security policy with every file', () => {
    for (const p of ['/', '/dashboard/app.js', '/dashboard/style.css']) {
      const r = d.serve(p);
      expect(header(r, 'cache-control')).toBe('no-cache');
      expect(header(r, 'x-content-type-options')).toBe('nosniff');
      expect(header(r, 'content-security-policy')).toBe(DASHBOARD_CSP);
    }
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|https?:|\*/);
  });

  it('refuses traversal, encoded names, hidden files, subfolders and unknown types', () => {
    for (const p of [
      '/dashboard/../package.json',
      `/dashboard/../${path.basename(dir)}-outside.txt`,
      '/dashboard/%2e%2e/package.json',
      '/dashboard/..%2fpackage.json',
      '/dashboard/%61pp.js',
      '/dashboard//app.js',
      '/dashboard/./app.js',
      '/dashboard/app.js/',
      '/dashboard/APP.JS',
      '/dashboard/.hidden.js',
      '/dashboard/sub/deep.js',
      '/dashboard/notes.md',
      '/dashboard/',
      '/dashboard',
      '/app.js',
      '/index.html',
      '//',
      '',
    ]) {
      expect([p, d.serve(p)]).toEqual([p, null]);
    }
  });

  it('serves the files as they were at load: later changes and new files are not seen', () => {
    fs.writeFileSync(path.join(dir, 'app.js'), 'changed');
    fs.writeFileSync(path.join(dir, 'late.js'), 'late');
    expect(text(d.serve('/dashboard/app.js'))).toBe('console.log(1)');
    expect(d.serve('/dashboard/late.js')).toBeNull();
  });

  it('hands out a fresh header list each time, so a caller adding headers changes no later reply', () => {
    d.serve('/dashboard/app.js')!.headers.push(['x-extra', '1']);
    expect(header(d.serve('/dashboard/app.js'), 'x-extra')).toBeUndefined();
  });

  it('answers / with a hint page when the folder is missing, and serves no assets', () => {
    const missing = loadDashboard(path.join(os.tmpdir(), 'svc-no-such-dashboard-dir', 'dashboard'));
    expect(missing.present).toBe(false);
    const r = missing.serve('/');
    expect(r?.status).toBe(200);
    expect(header(r, 'content-type')).toBe('text/html; charset=utf-8');
    expect(header(r, 'content-security-policy')).toBe(DASHBOARD_CSP);
    expect(text(r)).toContain('no dashboard assets');
    expect(text(r)).toContain('/admin/cluster');
    expect(missing.serve('/dashboard/app.js')).toBeNull();
  });

  it('treats a folder without index.html as no dashboard', () => {
    const partial = loadDashboard(assetDir({ 'app.js': 'x' }));
    expect(partial.present).toBe(false);
    expect(text(partial.serve('/'))).toContain('no dashboard assets');
    expect(partial.serve('/dashboard/app.js')).toBeNull();
  });

  it('loads the repository dashboard, which references only its own assets (works offline)', () => {
    const repo = loadDashboard(REPO_DASHBOARD);
    expect(repo.present).toBe(true);
    const html = text(repo.serve('/'));
    expect(html).toContain('src="/dashboard/app.js"');
    expect(html).toContain('href="/dashboard/style.css"');
    for (const p of ['/', '/dashboard/app.js', '/dashboard/style.css']) {
      const body = text(repo.serve(p));
      expect(body.length).toBeGreaterThan(0);
      // No CDN, font or image from elsewhere; no inline script or style the CSP would block.
      expect(body).not.toMatch(/(src|href)=["'](https?:)?\/\/|url\(\s*["']?(https?:)?\/\/|@import/);
    }
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
  });

  it('serves every script and style sheet the page names, uPlot from its pinned npm package', () => {
    const repo = loadDashboard(REPO_DASHBOARD);
    const html = text(repo.serve('/'));
    const refs = [...html.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs).toEqual(expect.arrayContaining(['/dashboard/uPlot.iife.min.js', '/dashboard/uPlot.min.css', '/dashboard/app.js', '/dashboard/router.js']));
    for (const ref of refs) {
      const r = repo.serve(ref);
      expect([ref, r?.status]).toEqual([ref, 200]);
      expect(text(r).length).toBeGreaterThan(0);
    }
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const pinned = pkg.dependencies['uplot'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(text(repo.serve('/dashboard/uPlot.iife.min.js'))).toBe(fs.readFileSync(path.join(path.dirname(require.resolve('uplot/package.json')), 'dist', 'uPlot.iife.min.js'), 'utf8'));
    // A folder of one's own gets no uPlot when asked not to.
    expect(loadDashboard(REPO_DASHBOARD, { vendor: false }).serve('/dashboard/uPlot.iife.min.js')).toBeNull();
  });
});
