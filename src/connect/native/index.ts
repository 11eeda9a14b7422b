/** Native plugins (C ABI of sdk/svc_connector.h). */
import type { SinkPlugin, SourcePlugin } from '../plugin-api';

export function createNativeSink(file: string, _isolation: 'process' | 'in_process', _timeoutMs: number, _onRestart: () => void): SinkPlugin {
  throw new Error(`native plugins are not supported yet: ${file}`);
}
export function createNativeSource(file: string, _isolation: 'process' | 'in_process', _timeoutMs: number, _onRestart: () => void): SourcePlugin {
  throw new Error(`native plugins are not supported yet: ${file}`);
}
