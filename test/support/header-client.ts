// A plain gRPC client whose every call carries fixed headers, e.g. the vault's admin secret: how an
// operator's tool or another service presents a shared secret.
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

export function clientWithHeaders<S extends DescService>(service: S, baseUrl: string, headers: Record<string, string>): Client<S> {
  return createClient(
    service,
    createGrpcTransport({
      baseUrl,
      interceptors: [
        (next) => (req) => {
          for (const [name, value] of Object.entries(headers)) req.header.set(name, value);
          return next(req);
        },
      ],
    }),
  );
}
