import { readFileSync } from "node:fs";
import type { DescService } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { createServiceClient, type ClientTlsOptions, type ServiceClient } from "../libs/rpc/client.js";
import { MESH, type MeshServiceName } from "../libs/rpc/mesh.js";
import { UsageError } from "./exit-codes.js";

/** `adn-gateway` → `MALHA_ADN_GATEWAY_URL`: where the CLI finds a service unless `--<name>-url` says. */
export function urlVariable(name: MeshServiceName): string {
  return `MALHA_${name.toUpperCase().replace(/-/g, "_")}_URL`;
}

export interface TargetOptions {
  urls: Partial<Record<MeshServiceName, string>>;
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
}

export function targetUrl(name: MeshServiceName, opts: TargetOptions): string {
  const url = opts.urls[name] ?? opts.env[urlVariable(name)] ?? `http://127.0.0.1:${MESH[name].port}`;
  if (!/^https?:\/\/[^/]+\/?$/.test(url))
    throw new UsageError(`${urlVariable(name)} / --${name}-url must be http(s)://host:port, got ${url}`);
  return url.replace(/\/$/, "");
}

/** TLS towards the mesh from MALHA_TLS_CA_FILE / MALHA_TLS_CERT_FILE / MALHA_TLS_KEY_FILE (https URLs). */
function tls(env: TargetOptions["env"]): ClientTlsOptions {
  const read = (variable: string) => {
    const path = env[variable];
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch {
      throw new UsageError(`${variable} names a file that cannot be read: ${path}`);
    }
  };
  const ca = read("MALHA_TLS_CA_FILE");
  const cert = read("MALHA_TLS_CERT_FILE");
  const key = read("MALHA_TLS_KEY_FILE");
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** Opens clients lazily and closes them all at the end of the command. */
export class Targets {
  private readonly open: ServiceClient<DescService>[] = [];
  constructor(private readonly opts: TargetOptions) {}

  /** The per-call deadline, also for plain HTTP downloads (signed links). */
  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  /** `headers` go with every call of this client (e.g. a tenant's API token). */
  client<S extends DescService>(name: MeshServiceName, service: S, headers: Record<string, string> = {}): ServiceClient<S>["client"] {
    const interceptors: Interceptor[] = Object.keys(headers).length
      ? [
          (next) => (req) => {
            for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
            return next(req);
          },
        ]
      : [];
    const c = createServiceClient(service, {
      baseUrl: targetUrl(name, this.opts),
      tls: tls(this.opts.env),
      defaultTimeoutMs: this.opts.timeoutMs,
      interceptors,
    });
    this.open.push(c as unknown as ServiceClient<DescService>);
    return c.client;
  }

  close(): void {
    for (const c of this.open.splice(0)) c.close();
  }
}
