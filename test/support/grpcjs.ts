import { create, fromBinary, toBinary, type DescService } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";

/**
 * A @grpc/grpc-js client for a protobuf-es service descriptor, without protobufjs or proto-loader:
 * proves the mesh interoperates with the most common non-connect gRPC stack.
 */
export function grpcJsClient(service: DescService, address: string, credentials = grpc.credentials.createInsecure()) {
  const definition: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of service.methods) {
    definition[m.localName] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: m.methodKind === "client_streaming" || m.methodKind === "bidi_streaming",
      responseStream: m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming",
      requestSerialize: (v: object) => Buffer.from(toBinary(m.input, create(m.input, v as never))),
      requestDeserialize: (b: Buffer) => fromBinary(m.input, b),
      responseSerialize: (v: object) => Buffer.from(toBinary(m.output, create(m.output, v as never))),
      responseDeserialize: (b: Buffer) => fromBinary(m.output, b),
    };
  }
  const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, service.typeName);
  return new Ctor(address, credentials) as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
}

/** Promisified unary call on a grpcJsClient. */
export function unary<T>(client: grpc.Client & Record<string, unknown>, method: string, request: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const fn = client[method] as (req: object, cb: (err: grpc.ServiceError | null, res: T) => void) => void;
    fn.call(client, request, (err, res) => (err ? reject(err) : resolve(res)));
  });
}
