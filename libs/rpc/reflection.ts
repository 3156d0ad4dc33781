import { create, toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.js";

type Request = v1.ServerReflectionRequest;
type Response = v1.ServerReflectionResponse;

/** gRPC status numbers the reflection protocol puts in ErrorResponse. */
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * An index of the descriptors behind the served services: file by name and file by fully-qualified
 * symbol (message, enum, service, method, field, enum value, extension).
 */
class DescriptorIndex {
  readonly files = new Map<string, DescFile>();
  private readonly symbols = new Map<string, DescFile>();

  constructor(services: readonly DescService[]) {
    for (const s of services) this.addFile(s.file);
  }

  private addFile(file: DescFile): void {
    if (this.files.has(file.name + ".proto")) return;
    this.files.set(file.name + ".proto", file);
    for (const dep of file.dependencies) this.addFile(dep);
    for (const type of nestedTypes(file)) {
      this.symbols.set(type.typeName, file);
      if (type.kind === "service") for (const m of type.methods) this.symbols.set(`${type.typeName}.${m.name}`, file);
      if (type.kind === "message") for (const f of type.fields) this.symbols.set(`${type.typeName}.${f.name}`, file);
      if (type.kind === "enum") for (const v of type.values) this.symbols.set(`${type.typeName}.${v.name}`, file);
    }
  }

  fileContaining(symbol: string): DescFile | undefined {
    return this.symbols.get(symbol.replace(/^\./, ""));
  }

  /** The file and everything it imports, dependencies first, each once. */
  withDependencies(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      for (const d of f.dependencies) visit(d);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
    };
    visit(file);
    return out.reverse(); // the requested file first, as grpc-go does
  }
}

function answer(index: DescriptorIndex, serviceNames: string[], req: Request): Response["messageResponse"] {
  const r = req.messageRequest;
  const notFound = (what: string) => ({
    case: "errorResponse" as const,
    value: create(v1.ErrorResponseSchema, { errorCode: NOT_FOUND, errorMessage: `${what} not found` }),
  });
  const files = (file: DescFile | undefined, what: string) =>
    file
      ? {
          case: "fileDescriptorResponse" as const,
          value: create(v1.FileDescriptorResponseSchema, { fileDescriptorProto: index.withDependencies(file) }),
        }
      : notFound(what);
  switch (r.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: create(v1.ListServiceResponseSchema, { service: serviceNames.map((name) => ({ name })) }),
      };
    case "fileByFilename":
      return files(index.files.get(r.value), `file ${r.value}`);
    case "fileContainingSymbol":
      return files(index.fileContaining(r.value), `symbol ${r.value}`);
    case "fileContainingExtension":
      return notFound(`extension ${r.value.containingType}#${r.value.extensionNumber}`);
    case "allExtensionNumbersOfType": {
      const known = index.fileContaining(r.value);
      if (!known) return notFound(`type ${r.value}`);
      return {
        case: "allExtensionNumbersResponse",
        value: create(v1.ExtensionNumberResponseSchema, { baseTypeName: r.value, extensionNumber: [] }),
      };
    }
    default:
      return {
        case: "errorResponse",
        value: create(v1.ErrorResponseSchema, { errorCode: INVALID_ARGUMENT, errorMessage: "empty reflection request" }),
      };
  }
}

/**
 * grpc.reflection.v1 and v1alpha over the protobuf-es descriptors of the served services, so grpcurl
 * and buf curl work without local protos. The two versions are wire-identical; one implementation
 * serves both.
 */
export function reflectionServices(served: readonly DescService[]) {
  const all = [...served, v1.ServerReflection, v1alpha.ServerReflection];
  const index = new DescriptorIndex(all);
  const names = all.map((s) => s.typeName).sort();
  const impl = {
    async *serverReflectionInfo(requests: AsyncIterable<Request>) {
      for await (const req of requests) {
        yield create(v1.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(index, names, req),
        });
      }
    },
  };
  return {
    v1: impl as unknown as ServiceImpl<typeof v1.ServerReflection>,
    v1alpha: impl as unknown as ServiceImpl<typeof v1alpha.ServerReflection>,
  };
}
