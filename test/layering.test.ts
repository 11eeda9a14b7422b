/**
 * The layers of src/ import downward only, at run time (ARCHITECTURE.md, "Modules and ownership").
 * eslint's import rules name what each folder may import; this test looks at what the built code
 * really loads: every source file is transpiled as tsc emits it (imports used only as types are
 * elided), its require() calls are resolved to files, and the graph of folders (the first path
 * segment under src/; a file at the top of src/ is a layer of its own) must have no cycle.
 * Cycles inside one folder are that folder's business.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const SRC = path.resolve(__dirname, '..', 'src');

/** Every .ts file under `dir`, as paths relative to src/. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(path.relative(SRC, p));
  }
  return out;
}

/** The src/ files `file` loads at run time. */
function runtimeImports(file: string, known: ReadonlySet<string>): string[] {
  const text = fs.readFileSync(path.join(SRC, file), 'utf8');
  const js = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText;
  const out: string[] = [];
  for (const m of js.matchAll(/require\("(\.{1,2}\/[^"]*)"\)/g)) {
    const base = path.normalize(path.join(path.dirname(file), m[1]!));
    const hit = [`${base}.ts`, path.join(base, 'index.ts')].find((c) => known.has(c));
    if (hit !== undefined) out.push(hit);
  }
  return out;
}

/** The layer a file belongs to: its folder under src/, or itself when it sits at the top. */
const layerOf = (file: string): string => (file.includes(path.sep) ? file.split(path.sep)[0]! : file);

interface Graph {
  /** layer → layer → one file-level import that makes the edge (for the failure message). */
  edges: Map<string, Map<string, string>>;
}

function layerGraph(): Graph {
  const files = sources(SRC);
  const known = new Set(files);
  const edges = new Map<string, Map<string, string>>();
  for (const f of files) {
    for (const t of runtimeImports(f, known)) {
      const a = layerOf(f);
      const b = layerOf(t);
      if (a === b) continue;
      if (!edges.has(a)) edges.set(a, new Map());
      if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${f} → ${t}`);
    }
  }
  return { edges };
}

/** Every layer reachable from `from` (not counting `from` itself unless a cycle comes back to it). */
function reachable(g: Graph, from: string): Map<string, string[]> {
  const via = new Map<string, string[]>();
  const queue: Array<[string, string[]]> = [[from, []]];
  while (queue.length > 0) {
    const [at, pathSoFar] = queue.shift()!;
    for (const [to, how] of g.edges.get(at) ?? []) {
      if (via.has(to)) continue;
      const p = [...pathSoFar, how];
      via.set(to, p);
      queue.push([to, p]);
    }
  }
  return via;
}

describe('layering of src/', () => {
  const g = layerGraph();

  it('finds the imports it checks (the graph is not empty)', () => {
    expect(g.edges.get('shards')?.has('objects')).toBe(true);
    expect(g.edges.get('gateway')?.has('shards')).toBe(true);
  });

  it('has no runtime import cycle between folders of src/', () => {
    const cycles: string[] = [];
    for (const layer of g.edges.keys()) {
      const back = reachable(g, layer).get(layer);
      if (back !== undefined) cycles.push(`${layer}: ${back.join(', ')}`);
    }
    expect(cycles).toEqual([]);
  });

  it('keeps the object store below the data plane: nothing in src/objects reaches src/shards', () => {
    expect(reachable(g, 'objects').get('shards')).toBeUndefined();
  });
});
