// The Node request handler of every service: connect's router and its universal request/response
// conversions, with one difference in what a caller is told. A request body that does not decode as the
// method's input message is the caller's mistake, yet connect-es answers it with INTERNAL ("parse binary:
// …"), while a JSON body it cannot read is INVALID_ARGUMENT. Its serialization is not configurable, so
// the answer is relabelled on its way out, for the gRPC protocol (trailers) and Connect unary (JSON error
// body): the two every client of the mesh, buf curl and the CLI speak.
import type * as http from "node:http";
import type * as http2 from "node:http2";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  type ContextValues,
  createConnectRouter,
} from "@connectrpc/connect";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
type NodeResponse = Parameters<typeof universalResponseToNodeResponse>[1];

export interface NodeAdapterOptions extends ConnectRouterOptions {
  routes(router: ConnectRouter): void;
  contextValues?(req: NodeRequest): ContextValues;
  /** A response that could not be written (not a cancelled one). */
  onWriteError(method: string, reason: unknown): void;
}

/** The message prefix connect-es gives a request body that protobuf could not decode. */
const UNDECODABLE = "parse binary:";

export function nodeAdapter(options: NodeAdapterOptions): (req: NodeRequest, res: NodeResponse) => void {
  const router = createConnectRouter(options);
  options.routes(router);
  const byPath = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req, res) => {
    const handler = byPath.get((req.url ?? "").split("?", 1)[0]!);
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, options.contextValues?.(req));
    handler(uReq)
      .then((uRes) => relabelUndecodableRequest(uRes))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code !== Code.Aborted)
          options.onWriteError(`${handler.service.typeName}/${handler.method.name}`, reason);
      });
  };
}

/** INTERNAL "parse binary: …" of the request → INVALID_ARGUMENT, same message; anything else untouched. */
export async function relabelUndecodableRequest(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const { trailer, body } = res;
  if (trailer && body) {
    // gRPC: the status travels in the trailers, set once the body has ended.
    return {
      ...res,
      body: (async function* () {
        yield* body;
        if (trailer.get("grpc-status") === String(Code.Internal) && grpcMessage(trailer).startsWith(UNDECODABLE))
          trailer.set("grpc-status", String(Code.InvalidArgument));
      })(),
    };
  }
  // Connect unary: an error is HTTP 500 with a one-chunk JSON body.
  if (res.status !== 500 || !body || !res.header?.get("content-type")?.startsWith("application/json")) return res;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const error = parseJson(bytes);
  if (error?.code !== "internal" || typeof error.message !== "string" || !error.message.startsWith(UNDECODABLE))
    return { ...res, body: once(bytes) };
  const relabelled = Buffer.from(JSON.stringify({ ...error, code: "invalid_argument" }));
  const header = new Headers(res.header);
  header.set("content-length", String(relabelled.byteLength));
  return { ...res, status: 400, header, body: once(relabelled) };
}

function grpcMessage(trailer: Headers): string {
  const raw = trailer.get("grpc-message") ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function parseJson(bytes: Uint8Array): { code?: unknown; message?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes).toString("utf8"));
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
