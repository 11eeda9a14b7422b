/** CPU time of a process's threads, from /proc (Linux): tests that check which threads did the work. */
import * as fs from 'node:fs';

/**
 * CPU ticks (user + system, 10 ms each) of each thread of `pid` named `prefix` and a number (e.g.
 * `svc-gw-`: the protocol listener's gateway threads `svc-gw-1`, `svc-gw-2`, not `--ds-listen`'s
 * `svc-gw-ds-1`, which `svc-gw-ds-` names).
 */
export function threadTicks(pid: number, prefix: string): number[] {
  const dir = `/proc/${pid}/task`;
  return fs
    .readdirSync(dir)
    .filter((t) => {
      const name = fs.readFileSync(`${dir}/${t}/comm`, 'utf8').trim();
      return name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length));
    })
    .map((t) => {
      const stat = fs.readFileSync(`${dir}/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(f[11]) + Number(f[12]);
    });
}
