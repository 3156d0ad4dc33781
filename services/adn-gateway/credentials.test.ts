import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestRoot, issueEcnpj } from "../../tools/adn-sim/icp-brasil.js";
import { presentedChain } from "./credentials.js";

const fingerprints = (pem: string) =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((b) =>
    new X509Certificate(b).fingerprint256.replace(/:/g, "").toLowerCase(),
  );

describe("presentedChain", () => {
  const root = createTestRoot();
  const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
  // Not self-signed, so it stands in for an intermediate: issued by the root, after the leaf.
  const intermediate = issueEcnpj(root, { cnpj: "11444777000161" });

  it("leaves out a self-signed certificate after the leaf and keeps the rest in order", () => {
    const chain = presentedChain(leaf.certPem + intermediate.certPem + root.certPem);
    expect(fingerprints(chain)).toEqual([leaf.fingerprint256, intermediate.fingerprint256]);
  });

  it("returns a chain without a root, a lone certificate, a self-signed leaf and text that is not PEM as they are", () => {
    const plain = leaf.certPem + intermediate.certPem;
    expect(presentedChain(plain)).toBe(plain);
    expect(presentedChain(leaf.certPem)).toBe(leaf.certPem);
    expect(presentedChain(root.certPem + leaf.certPem)).toBe(root.certPem + leaf.certPem);
    expect(presentedChain("chain-v1")).toBe("chain-v1");
    const broken = `${leaf.certPem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`;
    expect(presentedChain(broken)).toBe(broken);
  });
});
