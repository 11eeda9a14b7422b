/**
 * OTLP over gRPC (spec "[telemetry]": grpc or http transport). The only file under src/connect
 * that imports @grpc/grpc-js (1.14.7, pure JS). Sends an already encoded request (otlp-proto.ts)
 * to the collector's unary Export method: logs to
 * opentelemetry.proto.collector.logs.v1.LogsService/Export, spans to
 * opentelemetry.proto.collector.trace.v1.TraceService/Export. The endpoint is `host:port`,
 * `http://host:port` (plaintext) or `https://host:port` (TLS with the system's CAs).
 */
import * as grpc from '@grpc/grpc-js';

export const EXPORT_PATH = {
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
} as const;

const identity = (b: Buffer): Buffer => b;

export class OtlpGrpcClient {
  readonly #client: grpc.Client;

  constructor(endpoint: string) {
    const tls = endpoint.startsWith('https://');
    const target = endpoint.replace(/^https?:\/\//, '').replace(/\/+$/, '');
    this.#client = new grpc.Client(target, tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure());
  }

  /** One Export call; rejects with the gRPC status when the collector refuses or is unreachable. */
  export(signal: keyof typeof EXPORT_PATH, request: Buffer, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(EXPORT_PATH[signal], identity, identity, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err) => (err === null ? resolve() : reject(err)));
    });
  }

  close(): void {
    this.#client.close();
  }
}
