/**
 * A loopback OTLP/gRPC collector for tests: the two unary Export methods of
 * opentelemetry-proto's LogsService and TraceService, answering every request with an empty
 * response and handing the raw protobuf request to `onRequest`. The test side's owner of
 * @grpc/grpc-js.
 */
import * as grpc from '@grpc/grpc-js';

export interface GrpcCollector {
  port: number;
  close(): void;
}

export async function startGrpcCollector(onRequest: (signal: 'logs' | 'traces', body: Buffer) => void): Promise<GrpcCollector> {
  const server = new grpc.Server();
  const raw = { requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };
  const handler = (signal: 'logs' | 'traces') => (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
    onRequest(signal, call.request);
    cb(null, Buffer.alloc(0));
  };
  server.addService(
    {
      Logs: { path: '/opentelemetry.proto.collector.logs.v1.LogsService/Export', requestStream: false, responseStream: false, ...raw },
      Traces: { path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export', requestStream: false, responseStream: false, ...raw },
    } as grpc.ServiceDefinition,
    { Logs: handler('logs'), Traces: handler('traces') },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { port, close: () => server.forceShutdown() };
}
