import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { createTestRoot, issueEcnpj } from "../../tools/adn-sim/icp-brasil.js";
import { DirectoryCredentialSource } from "./credentials-dir.js";
import { CredentialsUnavailableError } from "./credentials.js";

describe("DirectoryCredentialSource", () => {
  const root = createTestRoot();
  const dir = mkdtempSync(join(tmpdir(), "malha-gw-creds-"));
  // No caching here: these cases are about reading the files.
  const source = new DirectoryCredentialSource(dir, { refreshMs: 0 });

  it("reads <ibge>.pem/.key, reports validity and CNPJ, and changes version when the files change", async () => {
    const first = issueEcnpj(root, { cnpj: "11222333000181", razaoSocial: "PREFEITURA" });
    writeFileSync(join(dir, "3550308.pem"), first.certPem + root.certPem);
    writeFileSync(join(dir, "3550308.key"), first.keyPem);
    const a = await source.get("3550308");
    expect(a).toMatchObject({ cnpj: "11222333000181", certificateId: first.fingerprint256, privateKeyPem: first.keyPem });
    // The root the file carries is not presented (presentedChain).
    expect(a.certificateChainPem.trim()).toBe(first.certPem.trim());
    expect(a.notAfter.getTime()).toBe(first.cert.validity.notAfter.getTime() - (first.cert.validity.notAfter.getTime() % 1000));
    expect((await source.get("3550308")).version).toBe(a.version);
    const second = issueEcnpj(root, { cnpj: "11222333000181" });
    writeFileSync(join(dir, "3550308.pem"), second.certPem);
    writeFileSync(join(dir, "3550308.key"), second.keyPem);
    expect((await source.get("3550308")).version).not.toBe(a.version);
  });

  it("reports an alphanumeric CNPJ, and none for a certificate whose CNPJ is malformed", async () => {
    const alnum = issueEcnpj(root, { cnpj: "12ABC34501DE35" });
    writeFileSync(join(dir, "5300108.pem"), alnum.certPem);
    writeFileSync(join(dir, "5300108.key"), alnum.keyPem);
    expect((await source.get("5300108")).cnpj).toBe("12ABC34501DE35");
    const wrong = issueEcnpj(root, { cnpj: "12ABC34501DE36" });
    writeFileSync(join(dir, "5300108.pem"), wrong.certPem);
    writeFileSync(join(dir, "5300108.key"), wrong.keyPem);
    expect((await source.get("5300108")).cnpj).toBe("");
  });

  it("trusts what it read for refreshMs, then re-reads only files that changed (replaced in place or renamed over)", async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "malha-gw-creds-cache-"));
    let now = 1_000_000;
    const cached = new DirectoryCredentialSource(cacheDir, { refreshMs: 1000, now: () => now });
    const first = issueEcnpj(root, { cnpj: "11222333000181" });
    writeFileSync(join(cacheDir, "3550308.pem"), first.certPem + root.certPem);
    writeFileSync(join(cacheDir, "3550308.key"), first.keyPem);
    const a = await cached.get("3550308");
    expect(a.certificateId).toBe(first.fingerprint256);

    const second = issueEcnpj(root, { cnpj: "11222333000181" });
    writeFileSync(join(cacheDir, "3550308.pem"), second.certPem + root.certPem);
    writeFileSync(join(cacheDir, "3550308.key"), second.keyPem);
    now += 999;
    expect((await cached.get("3550308")).certificateId).toBe(first.fingerprint256);
    now += 1;
    expect((await cached.get("3550308")).certificateId).toBe(second.fingerprint256);

    // Deleted files are noticed at the next check too.
    rmSync(join(cacheDir, "3550308.key"));
    now += 1000;
    await expect(cached.get("3550308")).rejects.toMatchObject({ problem: CredentialsProblem.NO_ACTIVE_CERTIFICATE });
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
