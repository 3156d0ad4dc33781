import type { DescService } from "@bufbuild/protobuf";
import { ConfigError, type EnvReader } from "../config/env.js";
import { createServiceClient, type ClientTlsOptions, type ServiceClient } from "./client.js";
import { MESH, peerUrlVariable, type MeshServiceName } from "./mesh.js";

/**
 * A client for another mesh service: URL from `<NAME>_URL` (default: loopback and its default port),
 * mesh TLS from MESH_TLS_CA_FILE / MESH_TLS_CERT_FILE / MESH_TLS_KEY_FILE when the URL is https.
 */
export function peerClient<S extends DescService>(
  env: EnvReader,
  name: MeshServiceName,
  service: S,
  opts?: { defaultTimeoutMs?: number },
): ServiceClient<S> {
  const variable = peerUrlVariable(name);
  const baseUrl = env.url(variable, ["http:", "https:"], { default: `http://127.0.0.1:${MESH[name].port}` });
  const tls: ClientTlsOptions = {};
  const ca = env.file("MESH_TLS_CA_FILE");
  const cert = env.file("MESH_TLS_CERT_FILE");
  const key = env.file("MESH_TLS_KEY_FILE");
  if (cert && !key) throw new ConfigError("MESH_TLS_KEY_FILE", "is required when MESH_TLS_CERT_FILE is set");
  if (ca) tls.ca = ca;
  if (cert && key) Object.assign(tls, { cert, key });
  return createServiceClient(service, {
    baseUrl,
    tls,
    defaultTimeoutMs: opts?.defaultTimeoutMs ?? 30_000,
  });
}
