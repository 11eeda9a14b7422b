/** CPU time of a process's threads, from /proc (Linux): tests that check which threads did the work. */
import * as fs from 'node:fs';

/** CPU ticks (user + system, 10 ms each) of each thread of `pid` whose name starts with `prefix` (e.g. `svc-gw-`, the gateway threads). */
export function threadTicks(pid: number, prefix: string): number[] {
  const dir = `/proc/${pid}/task`;
  return fs
    .readdirSync(dir)
    .filter((t) => fs.readFileSync(`${dir}/${t}/comm`, 'utf8').startsWith(prefix))
    .map((t) => {
      const stat = fs.readFileSync(`${dir}/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(f[11]) + Number(f[12]);
    });
}
