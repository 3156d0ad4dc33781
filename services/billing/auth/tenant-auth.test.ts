// Tenant API tokens: a billing process started with a tokens file refuses every RPC without a known
// token (UNAUTHENTICATED, in the authentication interceptor, before any handler runs) and every request
// naming another tenant than its token's (PERMISSION_DENIED, from actingTenant, the first line of every
// handler: an RPC whose handler forgot it fails here); the file is re-read when it changes; a bad file
// or no choice at all stops the process at start with one line.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { Environment } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../../test/support/billing-mesh.js";
import { clientWithHeaders } from "../../../test/support/header-client.js";
import { boletoValido } from "../testing/fixtures.js";
import { newTenantToken, parseTokensFile, TenantTokens, tokenDigest, tokensFileLine } from "./tenant-auth.js";

describe("tokens file", () => {
  it("maps token digests to tenants, with comments and blank lines, and names the line of a mistake", () => {
    const a = newTenantToken();
    expect(a).toMatch(/^bapi_[A-Za-z0-9_-]{43}$/);
    expect(newTenantToken()).not.toBe(a);
    const map = parseTokensFile(`# ERP of acme\n${tokensFileLine("acme", a)}   # since 2026-11\n\n`);
    expect([...map]).toEqual([[tokenDigest(a), "acme"]]);
    const bad = (text: string) => () => parseTokensFile(text);
    expect(bad("acme")).toThrow(/^line 1: expected/);
    expect(bad(`acme ${"A".repeat(64)}`)).toThrow(/^line 1: the token's SHA-256/);
    expect(bad(`a/b ${tokenDigest(a)}`)).toThrow(/^line 1: tenant/);
    expect(bad(`acme ${tokenDigest(a)}\nbeta ${tokenDigest(a)}`)).toThrow(/^line 2: the same token is listed twice/);
    expect(bad(`acme ${a}`)).toThrow(/SHA-256/); // the token itself never belongs in the file
  });

  it("is re-read when it changes; a file that stops parsing keeps the tokens loaded before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tokens-"));
    try {
      const file = join(dir, "tokens");
      const [a, b] = [newTenantToken(), newTenantToken()];
      writeFileSync(file, `${tokensFileLine("acme", a)}\n`);
      const tokens = new TenantTokens(file, undefined, 0);
      expect([tokens.tenantOf(a), tokens.tenantOf(b)]).toEqual(["acme", undefined]);
      writeFileSync(file, `${tokensFileLine("beta", b)}\n`);
      expect([tokens.tenantOf(a), tokens.tenantOf(b)]).toEqual([undefined, "beta"]);
      writeFileSync(file, "beta not-a-digest\n");
      expect(tokens.tenantOf(b)).toBe("beta");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a billing process with tenant tokens", () => {
  let mesh: BillingMesh;
  let dir: string;
  let file: string;
  const acme = newTenantToken();
  const beta = newTenantToken();
  const as = (token: string): Client<typeof BillingService> =>
    clientWithHeaders(BillingService, mesh.billing[0]!.baseUrl, { authorization: `Bearer ${token}` });
  const codeOf = async (call: Promise<unknown>): Promise<Code | "ok"> =>
    await call.then(
      () => "ok" as const,
      (e: unknown) => ConnectError.from(e).code,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "billing-tokens-"));
    file = join(dir, "tenant-tokens");
    writeFileSync(file, `# tenant sha256(token)\n${tokensFileLine("acme", acme)}\n`);
    mesh = await startBillingMesh({ billingEnv: { BILLING_TENANT_TOKENS_FILE: file } });
  });
  afterAll(async () => {
    await mesh?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses every RPC without a known token, and every request naming another tenant, before anything is done", async () => {
    const clients = {
      none: mesh.billingClient(),
      malformed: clientWithHeaders(BillingService, mesh.billing[0]!.baseUrl, { authorization: "Basic YWNtZTp4" }),
      unknown: as(newTenantToken()),
      acme: as(acme),
    };
    for (const m of BillingService.methods) {
      const call = (c: Client<typeof BillingService>, tenant: string) =>
        (c as unknown as Record<string, (r: object) => Promise<unknown>>)[m.localName]!({ tenant });
      expect(await codeOf(call(clients.none, "acme")), `${m.name} without a token`).toBe(Code.Unauthenticated);
      expect(await codeOf(call(clients.malformed, "acme")), `${m.name} with Basic`).toBe(Code.Unauthenticated);
      expect(await codeOf(call(clients.unknown, "acme")), `${m.name} with an unknown token`).toBe(Code.Unauthenticated);
      expect(await codeOf(call(clients.acme, "beta")), `${m.name} for another tenant`).toBe(Code.PermissionDenied);
    }
    // Nothing was created by any of those calls.
    expect(
      await mesh.db.pool.query("SELECT COUNT(*) AS n FROM billing_jobs").then(([r]) => Number((r as { n: number | string }[])[0]!.n)),
    ).toBe(0);
    const err = await as(acme)
      .getBoletoJob({ tenant: "beta", jobId: "x" })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.rawMessage).toBe("this API token acts for tenant acme, not for the tenant the request names");
  });

  it("acts for its own tenant, which an empty tenant field defaults to", async () => {
    const c = as(acme);
    const { job } = await c.createBoletoJob({ environment: Environment.SANDBOX, items: [boletoValido(1)] });
    expect(job?.tenant).toBe("acme");
    expect((await c.getBoletoJob({ tenant: "acme", jobId: job!.jobId })).job?.jobId).toBe(job!.jobId);
    expect((await c.listJobs({})).jobs.map((j) => j.jobId)).toContain(job!.jobId);
  });

  it("takes a token added to the file without a restart, and stops taking a removed one", async () => {
    const until = async (ok: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 100));
      return ok();
    };
    writeFileSync(file, `${tokensFileLine("acme", acme)}\n${tokensFileLine("beta", beta)}\n`);
    expect(await until(async () => (await codeOf(as(beta).listJobs({ tenant: "beta" }))) === "ok")).toBe(true);
    writeFileSync(file, `${tokensFileLine("beta", beta)}\n`);
    expect(await until(async () => (await codeOf(as(acme).listJobs({ tenant: "acme" }))) === Code.Unauthenticated)).toBe(true);
    expect(await codeOf(as(beta).listJobs({ tenant: "beta" }))).toBe("ok");
  });
});

describe("billing's start without a choice of caller authentication", () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, ["--import", "tsx", "services/billing/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        MYSQL_URL: "mysql://u:p@127.0.0.1:1/malha",
        NATS_URL: "nats://127.0.0.1:1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        ...env,
      },
      encoding: "utf8",
      timeout: 30_000,
    });

  it("exits 78 with one line: no tokens file and no trusted network, both, or a malformed file", () => {
    const none = start({});
    expect(none.status).toBe(78);
    expect(none.stderr.trim()).toMatch(/^billing: config error: BILLING_TENANT_TOKENS_FILE is required: per-tenant API tokens/);
    const dir = mkdtempSync(join(tmpdir(), "billing-bad-tokens-"));
    try {
      const bad = join(dir, "tokens");
      writeFileSync(bad, "acme 1234\n");
      expect(start({ BILLING_TENANT_TOKENS_FILE: bad, BILLING_TRUST_NETWORK: "true" }).stderr.trim()).toMatch(
        /^billing: config error: BILLING_TRUST_NETWORK cannot be true together/,
      );
      const malformed = start({ BILLING_TENANT_TOKENS_FILE: bad });
      expect(malformed.status).toBe(78);
      expect(malformed.stderr.trim()).toBe(
        "billing: config error: BILLING_TENANT_TOKENS_FILE is malformed: line 1: the token's SHA-256 must be 64 lowercase hex digits (malha billing tokens new prints the line)",
      );
      const missing = start({ BILLING_TENANT_TOKENS_FILE: join(dir, "nope") });
      expect(missing.stderr.trim()).toBe("billing: config error: BILLING_TENANT_TOKENS_FILE cannot be read (ENOENT)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
