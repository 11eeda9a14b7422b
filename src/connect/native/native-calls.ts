/**
 * Runs a HostRequest against a loaded native library. Used by the host process (isolation =
 * "process") and directly by the runtime (isolation = "in_process").
 */
import { loadNativeSink, loadNativeSource, type NativeLog, type NativeSink, type NativeSource } from './ffi';
import type { HostRequest, HostResults } from './host-protocol';

const POLL_START = 256 * 1024; // bytes: first poll buffer; grows to what the plugin asks for
const POLL_MAX = 64 * 1024 * 1024; // bytes

export class NativeCalls {
  #sink: NativeSink | null = null;
  #source: NativeSource | null = null;
  #pollBuf = Buffer.alloc(POLL_START);
  readonly #outLen = new Uint32Array(1);

  constructor(readonly log: NativeLog) {}

  #check(rc: number, what: string, id: number, lib: NativeSink | NativeSource): void {
    if (rc < 0) throw new Error(`${what} returned ${rc}: ${lib.lastError(id) || 'no message'}`);
  }

  run<K extends HostRequest['op']>(req: Extract<HostRequest, { op: K }>): HostResults[K] {
    return this.#run(req) as HostResults[K];
  }

  #run(req: HostRequest): HostResults[HostRequest['op']] {
    switch (req.op) {
      case 'sink.load':
        this.#sink = loadNativeSink(req.file, this.log);
        return null;
      case 'source.load':
        this.#source = loadNativeSource(req.file, this.log);
        return null;
      case 'sink.open':
        this.#check(this.#sinkLib().open(req.id, Buffer.from(req.config)), 'svc_sink_open', req.id, this.#sinkLib());
        return null;
      case 'sink.write': {
        const results = Buffer.alloc(req.count, 255);
        this.#check(this.#sinkLib().write(req.id, Buffer.from(req.batch.buffer, req.batch.byteOffset, req.batch.byteLength), results, req.count), 'svc_sink_write', req.id, this.#sinkLib());
        return results;
      }
      case 'sink.flush':
        this.#check(this.#sinkLib().flush(req.id), 'svc_sink_flush', req.id, this.#sinkLib());
        return null;
      case 'sink.close':
        this.#check(this.#sinkLib().close(req.id), 'svc_sink_close', req.id, this.#sinkLib());
        return null;
      case 'source.open':
        this.#check(this.#sourceLib().open(req.id, Buffer.from(req.config), Buffer.from(req.state)), 'svc_source_open', req.id, this.#sourceLib());
        return null;
      case 'source.poll': {
        for (;;) {
          const rc = this.#sourceLib().poll(req.id, this.#pollBuf, this.#outLen, req.max, req.timeoutMs);
          if (rc === 1) return null;
          if (rc === 2) {
            const need = this.#outLen[0]!;
            if (need <= this.#pollBuf.length || need > POLL_MAX) throw new Error(`svc_source_poll asked for ${need} bytes (limit ${POLL_MAX})`);
            this.#pollBuf = Buffer.alloc(need);
            continue;
          }
          this.#check(rc, 'svc_source_poll', req.id, this.#sourceLib());
          if (rc !== 0) throw new Error(`svc_source_poll returned unknown code ${rc}`);
          return Buffer.from(this.#pollBuf.subarray(0, this.#outLen[0]!));
        }
      }
      case 'source.commit':
        this.#check(this.#sourceLib().commit(req.id, req.ack ? 1 : 0), 'svc_source_commit', req.id, this.#sourceLib());
        return null;
      case 'source.close':
        this.#check(this.#sourceLib().close(req.id), 'svc_source_close', req.id, this.#sourceLib());
        return null;
    }
  }

  #sinkLib(): NativeSink {
    if (this.#sink === null) throw new Error('no sink library loaded');
    return this.#sink;
  }
  #sourceLib(): NativeSource {
    if (this.#source === null) throw new Error('no source library loaded');
    return this.#source;
  }
}
