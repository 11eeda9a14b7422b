/** Compiles the C test fixtures (test/connect/fixtures) with gcc against the repository's SDK header. */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT, tempDir } from '../../helpers/node-process';

export type FixtureMode = 'CRASH_ONCE' | 'HANG' | 'WRONG_SDK';

/** Returns the path of `libsvc_fixture_<mode>.so` in a new temp folder. */
export function buildFixture(mode: FixtureMode, dir = tempDir('svc-connect-fx-')): string {
  const out = path.join(dir, `libsvc_fixture_${mode.toLowerCase()}.so`);
  execFileSync('gcc', ['-shared', '-fPIC', '-Wall', '-Wextra', '-Werror', `-DMODE_${mode}`, '-I', path.join(ROOT, 'src', 'connect', 'sdk'), '-o', out, path.join(ROOT, 'test', 'connect', 'fixtures', 'fault_sink.c')]);
  return out;
}

/** Builds the counter source fixture producing `count` records (with headers: -DWITH_HEADERS); returns its path. */
export function buildCounterSource(count: number, dir = tempDir('svc-connect-fx-'), headers = false): string {
  const out = path.join(dir, 'libsvc_fixture_counter_source.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-Wall', '-Wextra', '-Werror', `-DCOUNT=${count}`, ...(headers ? ['-DWITH_HEADERS'] : []), '-I', path.join(ROOT, 'src', 'connect', 'sdk'), '-o', out, path.join(ROOT, 'test', 'connect', 'fixtures', 'counter_source.c')]);
  return out;
}
