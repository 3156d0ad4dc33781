import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { createTestRoot, issueEcnpj } from "../../test/support/icp-brasil.js";
import { DirectoryCredentialSource } from "./credentials-dir.js";
import { CredentialsUnavailableError } from "./credentials.js";

describe("DirectoryCredentialSource", () => {
  const root = createTestRoot();
  const dir = mkdtempSync(join(tmpdir(), "malha-gw-creds-"));
  const source = new DirectoryCredentialSource(dir);

  it("reads <ibge>.pem/.key, reports validity and CNPJ, and changes version when the files change", async () => {
    const first = issueEcnpj(root, { cnpj: "11222333000181", razaoSocial: "PREFEITURA" });
    writeFileSync(join(dir, "3550308.pem"), first.certPem + root.certPem);
    writeFileSync(join(dir, "3550308.key"), first.keyPem);
    const a = await source.get("3550308");
    expect(a).toMatchObject({ cnpj: "11222333000181", certificateId: first.fingerprint256, privateKeyPem: first.keyPem });
    expect(a.notAfter.getTime()).toBe(first.cert.validity.notAfter.getTime() - (first.cert.validity.notAfter.getTime() % 1000));
    expect((await source.get("3550308")).version).toBe(a.version);
    const second = issueEcnpj(root, { cnpj: "11222333000181" });
    writeFileSync(join(dir, "3550308.pem"), second.certPem);
    writeFileSync(join(dir, "3550308.key"), second.keyPem);
    expect((await source.get("3550308")).version).not.toBe(a.version);
  });

  it("says NO_ACTIVE_CERTIFICATE for a municipality without files, UNDECRYPTABLE for garbage", async () => {
    await expect(source.get("4106902")).rejects.toMatchObject({ problem: CredentialsProblem.NO_ACTIVE_CERTIFICATE });
    writeFileSync(join(dir, "3106200.pem"), "not a certificate");
    writeFileSync(join(dir, "3106200.key"), "not a key");
    const err = await source.get("3106200").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialsUnavailableError);
    expect(err).toMatchObject({ problem: CredentialsProblem.UNDECRYPTABLE });
  });
});
