import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../config/env.js";
import { readRuntimeConfig } from "./runtime-config.js";
import { createMeshTls } from "../../test/support/mesh-tls.js";

const DEFAULTS = { port: 50051, metricsPort: 9101 };
const read = (env: Record<string, string>) => readRuntimeConfig(new EnvReader(env), DEFAULTS);

describe("runtime config", () => {
  it("the access log is on unless RPC_ACCESS_LOG=false", () => {
    expect(read({}).accessLog).toBe(true);
    expect(read({ RPC_ACCESS_LOG: "false" }).accessLog).toBe(false);
    expect(() => read({ RPC_ACCESS_LOG: "sometimes" })).toThrow(/RPC_ACCESS_LOG/);
  });

  it("the HTTP/1.1 listener is off unless HTTP1_PORT is set; its host defaults to GRPC_HOST", () => {
    expect(read({}).http1).toBeUndefined();
    expect(read({ HTTP1_PORT: "8080", GRPC_HOST: "127.0.0.1" }).http1).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(read({ HTTP1_PORT: "0", HTTP1_HOST: "0.0.0.0" }).http1).toEqual({ host: "0.0.0.0", port: 0 });
    expect(() => read({ HTTP1_PORT: "70000" })).toThrow(/HTTP1_PORT must be an integer between 0 and 65535/);
  });

  it("refuses HTTP1_PORT together with TLS: a plaintext port would bypass TLS and the mTLS identities", () => {
    const pki = createMeshTls();
    const err = (() => {
      try {
        read({ HTTP1_PORT: "8080", TLS_CERT_FILE: pki.serverCert, TLS_KEY_FILE: pki.serverKey });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^config error: HTTP1_PORT cannot be used with TLS_CERT_FILE/);
  });
});
