/**
 * The native plugin host: a child process that loads one plugin library and runs the
 * runtime's requests one at a time. A segfault or a hang here costs this process only; the
 * runtime sees the exit (or its own call timeout, then SIGKILL) and fails the connector.
 */
import type { Envelope, HostMessage } from './host-protocol';
import { NativeCalls } from './native-calls';

const send = (m: HostMessage): void => {
  process.send!(m);
};

const calls = new NativeCalls((id, level, msg) => send({ log: { id, level, msg } }));

process.on('message', (m: Envelope) => {
  const { call, ...req } = m;
  try {
    send({ call, ok: true, value: calls.run(req) });
  } catch (err) {
    send({ call, ok: false, message: (err as Error).message });
  }
});
// The runtime went away: nothing more will be asked.
process.on('disconnect', () => process.exit(0));
