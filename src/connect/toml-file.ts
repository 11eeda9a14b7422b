/** svc-connectors' TOML files (definitions), in this program's message shapes; parsing is src/program/toml.ts's. */
import { describeTomlProblem, parseToml as parse, readTomlFile as read, stringifyToml } from '../program';

/** The parsed file, or one message saying why it could not be read (with the path). */
export function readTomlFile(path: string): { value: Record<string, unknown> } | { error: string; missing?: boolean } {
  const r = read(path);
  if (r.ok) return { value: r.value };
  if (r.problem.kind === 'unreadable') return { error: `cannot read ${path}: ${r.problem.code}`, missing: r.problem.code === 'ENOENT' };
  return { error: `${path}: ${describeTomlProblem(r.problem)}` };
}

export function parseToml(text: string, where: string): { value: Record<string, unknown> } | { error: string } {
  const r = parse(text);
  return r.ok ? { value: r.value } : { error: `${where}: ${describeTomlProblem(r.problem)}` };
}

export function toToml(value: Record<string, unknown>): string {
  return stringifyToml(value);
}
