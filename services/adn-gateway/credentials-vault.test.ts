// Caching and refresh of the vault source, with the vault's answers scripted (the real vault process is
// exercised in vault-credentials.test.ts).
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type CallOptions } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import {
  GetClientCredentialsResponseSchema,
  type GetClientCredentialsRequest,
  type GetClientCredentialsResponse,
  type VaultService,
} from "../../libs/gen/malha/vault/v1/vault_pb.js";
import type { ServiceClient } from "../../libs/rpc/client.js";
import { reasonedError } from "../../libs/rpc/errors.js";
import { CredentialsUnavailableError } from "./credentials.js";
import { mapVaultError, VAULT_SECRET_HEADER, VaultCredentialSource } from "./credentials-vault.js";

const full = (version: string) =>
  create(GetClientCredentialsResponseSchema, {
    version,
    certificateId: `cert-${version}`,
    privateKeyPem: `key-${version}`,
    certificateChainPem: `chain-${version}`,
    notAfter: timestampFromMs(Date.UTC(2030, 0, 1)),
    cnpj: "11222333000181",
  });

function vaultAnswering(answers: (GetClientCredentialsResponse | ConnectError)[]) {
  const seen: { req: GetClientCredentialsRequest; headers: Headers }[] = [];
  const client = {
    client: {
      async getClientCredentials(req: GetClientCredentialsRequest, opts?: CallOptions) {
        seen.push({ req, headers: new Headers(opts?.headers) });
        const answer = answers.shift();
        if (!answer) throw new Error("unexpected vault call");
        if (answer instanceof ConnectError) throw answer;
        return answer;
      },
    },
    close() {},
  } as unknown as ServiceClient<typeof VaultService>;
  return { client, seen };
}

describe("VaultCredentialSource", () => {
  it("caches in memory, re-checks with known_version after the refresh interval, and follows a new version", async () => {
    let now = 0;
    const vault = vaultAnswering([full("v1"), create(GetClientCredentialsResponseSchema, { unchanged: true, version: "v1" }), full("v2")]);
    const source = new VaultCredentialSource(vault.client, {
      secret: "the-shared-secret",
      refreshMs: 1000,
      url: "http://vault",
      now: () => now,
    });
    const first = await source.get("3550308");
    expect(first).toMatchObject({ version: "v1", privateKeyPem: "key-v1", certificateChainPem: "chain-v1", cnpj: "11222333000181" });
    now = 999;
    expect(await source.get("3550308")).toBe(first);
    expect(vault.seen).toHaveLength(1);
    now = 1000;
    expect(await source.get("3550308")).toBe(first);
    now = 2500;
    expect((await source.get("3550308")).version).toBe("v2");
    expect(vault.seen.map((s) => s.req.knownVersion)).toEqual(["", "v1", "v1"]);
    expect(vault.seen.every((s) => s.headers.get(VAULT_SECRET_HEADER) === "the-shared-secret")).toBe(true);
    expect(source.description).not.toContain("the-shared-secret");
  });

  it("shares one vault call among concurrent requests for a municipality", async () => {
    const vault = vaultAnswering([full("v1")]);
    const source = new VaultCredentialSource(vault.client, { refreshMs: 60_000, url: "http://vault" });
    const [a, b] = await Promise.all([source.get("3550308"), source.get("3550308")]);
    expect(a).toBe(b);
    expect(vault.seen).toHaveLength(1);
    expect(vault.seen[0]!.headers.has(VAULT_SECRET_HEADER)).toBe(false);
  });

  it("maps the vault's refusals and forgets credentials that are no longer usable", async () => {
    let now = 0;
    const vault = vaultAnswering([
      full("v1"),
      new ConnectError("municipality 3550308 has no ACTIVE certificate", Code.NotFound),
      new ConnectError("the ACTIVE certificate x expired at 2026-01-01", Code.FailedPrecondition),
      new ConnectError("key id k2 is not configured", Code.FailedPrecondition),
      new ConnectError("tampered", Code.DataLoss),
      new ConnectError("only the ADN gateway may fetch client credentials", Code.PermissionDenied),
      new ConnectError("connect ECONNREFUSED", Code.Unavailable),
    ]);
    const source = new VaultCredentialSource(vault.client, { refreshMs: 10, url: "http://vault", now: () => now });
    await source.get("3550308");
    const problems: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      now += 100;
      problems.push(await source.get("3550308").catch((e: unknown) => (e instanceof CredentialsUnavailableError ? e.problem : e)));
    }
    expect(problems).toEqual([
      CredentialsProblem.NO_ACTIVE_CERTIFICATE,
      CredentialsProblem.EXPIRED,
      CredentialsProblem.UNDECRYPTABLE,
      CredentialsProblem.UNDECRYPTABLE,
    ]);
    // After a refusal the cached copy is gone: the next call asks without a known version.
    expect(vault.seen[2]!.req.knownVersion).toBe("");
    const denied = ConnectError.from(await source.get("3550308").catch((e: unknown) => e));
    expect(denied.code).toBe(Code.FailedPrecondition);
    expect(ConnectError.from(await source.get("3550308").catch((e: unknown) => e)).code).toBe(Code.Unavailable);
  });

  it("goes by the vault's ErrorInfo reason when there is one, whatever the message says", () => {
    const refusal = (code: Code, reason: string, message = "wording that changed") =>
      mapVaultError(reasonedError("malha.vault", message, code, reason), "3550308") as CredentialsUnavailableError;
    // The message would have said "undecryptable" (no "expir" in it): the reason decides.
    expect(refusal(Code.FailedPrecondition, "CERTIFICATE_EXPIRED").problem).toBe(CredentialsProblem.EXPIRED);
    expect(refusal(Code.FailedPrecondition, "MASTER_KEY_NOT_CONFIGURED", "the certificate expired key").problem).toBe(
      CredentialsProblem.UNDECRYPTABLE,
    );
    expect(refusal(Code.NotFound, "NO_ACTIVE_CERTIFICATE").problem).toBe(CredentialsProblem.NO_ACTIVE_CERTIFICATE);
    expect(refusal(Code.DataLoss, "CIPHERTEXT_TAMPERED").message).toContain("municipality 3550308 (wording that changed)");
    // Another domain's reason is not the vault's.
    expect(
      mapVaultError(reasonedError("malha.store", "x expired", Code.FailedPrecondition, "CERTIFICATE_EXPIRED"), "3550308"),
    ).toMatchObject({
      problem: CredentialsProblem.EXPIRED,
    });
    expect(mapVaultError(reasonedError("malha.store", "x", Code.FailedPrecondition, "CERTIFICATE_EXPIRED"), "3550308")).toMatchObject({
      problem: CredentialsProblem.UNDECRYPTABLE,
    });
  });
});
