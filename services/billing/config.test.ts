import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { readBillingConfig } from "./config.js";

const read = (env: Record<string, string>) =>
  readBillingConfig(
    new EnvReader({
      MYSQL_URL: "mysql://u:p@127.0.0.1:3306/malha",
      NATS_URL: "nats://127.0.0.1:4222",
      BILLING_TRUST_NETWORK: "true",
      ...env,
    }),
  );

describe("billing render defaults", () => {
  it("keeps 16 items in flight and one render thread per CPU, at most 4 unless set", () => {
    const c = read({});
    expect(c.renderConcurrency).toBe(16);
    expect(c.renderThreads).toBe(Math.max(1, Math.min(16, availableParallelism(), 4)));
  });

  it("never starts more threads than items in flight, and takes explicit values as given", () => {
    expect(read({ BILLING_RENDER_CONCURRENCY: "1" }).renderThreads).toBe(1);
    expect(read({ BILLING_RENDER_THREADS: "12" }).renderThreads).toBe(12);
  });
});

describe("billing caller authentication", () => {
  it("is a tokens file or an explicitly trusted network, never both and never neither", () => {
    const base = { MYSQL_URL: "mysql://u:p@127.0.0.1:3306/malha", NATS_URL: "nats://127.0.0.1:4222" };
    const cfg = (env: Record<string, string>) => readBillingConfig(new EnvReader({ ...base, ...env }));
    expect(cfg({ BILLING_TENANT_TOKENS_FILE: "/etc/malha/billing-tenant-tokens" }).tenantAuth).toEqual({
      mode: "tokens",
      file: "/etc/malha/billing-tenant-tokens",
    });
    expect(cfg({ BILLING_TRUST_NETWORK: "true" }).tenantAuth).toEqual({ mode: "trusted-network" });
    expect(() => cfg({})).toThrow(/^config error: BILLING_TENANT_TOKENS_FILE is required/);
    expect(() => cfg({ BILLING_TRUST_NETWORK: "false" })).toThrow(/BILLING_TENANT_TOKENS_FILE is required/);
    expect(() => cfg({ BILLING_TENANT_TOKENS_FILE: "/x", BILLING_TRUST_NETWORK: "true" })).toThrow(
      /^config error: BILLING_TRUST_NETWORK cannot be true together/,
    );
  });

  it("keeps finished jobs 180 days by default, forever with 0, and never less than their artifacts live", () => {
    const days = (env: Record<string, string>) => read(env).retentionMs / 86_400_000;
    expect([days({}), days({ BILLING_RETENTION_DAYS: "0" }), days({ BILLING_RETENTION_DAYS: "30", ARTIFACT_TTL_DIAS: "30" })]).toEqual([
      180, 0, 30,
    ]);
    expect(() => read({ BILLING_RETENTION_DAYS: "3" })).toThrow(
      /^config error: BILLING_RETENTION_DAYS must be 0 \(keep forever\) or at least ARTIFACT_TTL_DIAS \(7\)/,
    );
  });
});
