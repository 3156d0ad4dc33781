import { createPrivateKey, X509Certificate } from "node:crypto";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { ImportRejectionReason as Reason } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { createTestRoot, issueCustom, issueEcnpj, toLegacyPfx, toOpensslPfx, toPfx, toPfxWith } from "../../tools/adn-sim/icp-brasil.js";
import { ImportRefusal } from "./import-refusal.js";
import { cnpjInText } from "../../libs/tax-id/icp-certificate.js";
import { MAX_PFX_BYTES, openPfx } from "./pfx.js";

const now = new Date();
const root = createTestRoot();
const day = 24 * 3600_000;

function refusal(fn: () => unknown): ImportRefusal {
  try {
    fn();
  } catch (err) {
    if (err instanceof ImportRefusal) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("openPfx", () => {
  it("opens a 3DES PFX: leaf, key matching it, chain, metadata and the CNPJ from the otherName", () => {
    const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
    const opened = openPfx(toPfx(leaf, [root], "s3nh@"), "s3nh@", now);
    expect(opened.fingerprint).toBe(leaf.fingerprint256);
    expect(opened.cnpj).toBe("11222333000181");
    expect(opened.cnpjSource).toBe("otherName");
    expect(opened.chainLength).toBe(2);
    const chain = opened.chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
    expect(new X509Certificate(chain[0]!).fingerprint256).toBe(new X509Certificate(leaf.certPem).fingerprint256);
    expect(new X509Certificate(chain[1]!).subject).toContain("CN=AC Raiz Malha Teste");
    expect(opened.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(new X509Certificate(leaf.certPem).checkPrivateKey(createPrivateKey(opened.privateKeyPem))).toBe(true);
    expect(opened.subject).toBe("CN=EMPRESA TESTE LTDA:11222333000181,OU=Certificado PJ A1,O=ICP-Brasil,C=BR");
    expect(opened.issuer).toBe("CN=AC Raiz Malha Teste,OU=Malha Test Root,O=ICP-Brasil,C=BR");
    expect(opened.serialNumber).toBe(leaf.cert.serialNumber.toLowerCase());
    expect(Math.abs(opened.notAfter.getTime() - leaf.cert.validity.notAfter.getTime())).toBeLessThan(1000);
  });

  it("opens the legacy RC2-40 PFX that Node's OpenSSL 3 refuses", () => {
    const leaf = issueEcnpj(root, { cnpj: "11222333000181", otherNameEncoding: "octet" });
    const opened = openPfx(toLegacyPfx(leaf, [root], "legado"), "legado", now);
    expect(opened.fingerprint).toBe(leaf.fingerprint256);
    expect(opened.cnpj).toBe("11222333000181");
  });

  // Passwords are UTF-8: OpenSSL 3's default (PBES2/PBKDF2 + AES-256) takes its bytes, the legacy PKCS#12
  // PBE and the MAC a BMPString; both must open with what `openssl pkcs12 -info` accepts.
  it.each([
    ["aes256", "Senha@ção"],
    ["3des", "Senha@ção"],
    ["aes256", "Пароль€✓"],
    ["3des", "Пароль€✓"],
  ] as const)("opens a PFX the openssl CLI wrote with %s and the non-ASCII password %s", (cipher, password) => {
    const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
    const pfx = toOpensslPfx(leaf, [root], password, cipher);
    const opened = openPfx(pfx, password, now);
    expect(opened.fingerprint).toBe(leaf.fingerprint256);
    expect(opened.chainLength).toBe(2);
    expect(new X509Certificate(leaf.certPem).checkPrivateKey(createPrivateKey(opened.privateKeyPem))).toBe(true);
    // The same letters without their accents are another password.
    const wrong = refusal(() => openPfx(pfx, password.normalize("NFD").replace(/\p{M}/gu, "") + "x", now));
    expect(wrong.reason).toBe(Reason.WRONG_PASSWORD);
  });

  it("opens a legacy RC2-40 PFX with a non-ASCII password", () => {
    const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
    expect(openPfx(toLegacyPfx(leaf, [root], "Senha@ção"), "Senha@ção", now).fingerprint).toBe(leaf.fingerprint256);
  });

  it.each(["utf8", "printable", "octet"] as const)("reads the CNPJ otherName encoded as %s", (encoding) => {
    const leaf = issueCustom(root, { commonName: "SEM CNPJ NO CN", cnpj: "99888777000100", otherNameEncoding: encoding });
    const opened = openPfx(toPfx(leaf, [], "x"), "x", now);
    expect(opened).toMatchObject({ cnpj: "99888777000100", cnpjSource: "otherName" });
  });

  it("writes subject and issuer as RFC 4514, escaping special characters once", () => {
    const leaf = issueCustom(root, { commonName: "PREFEITURA, DE SÃO PAULO:11222333000181" });
    expect(openPfx(toPfx(leaf, [], "x"), "x", now).subject).toBe(
      "CN=PREFEITURA\\, DE SÃO PAULO:11222333000181,OU=Certificado PJ A1,O=ICP-Brasil,C=BR",
    );
  });

  it("falls back to the CNPJ in the subject CN when there is no otherName", () => {
    const leaf = issueCustom(root, { commonName: "PREFEITURA TESTE:12.345.678/0001-95" });
    expect(openPfx(toPfx(leaf, [], "x"), "x", now)).toMatchObject({ cnpj: "12345678000195", cnpjSource: "commonName" });
  });

  it("refuses each unusable file with its reason, gRPC code and a message without the password", () => {
    const good = issueEcnpj(root, { cnpj: "11222333000181" });
    const other = issueEcnpj(root, { cnpj: "11222333000181" });
    const cases: [string, () => unknown, Reason, string, RegExp][] = [
      [
        "wrong password",
        () => openPfx(toPfx(good, [], "certa"), "errada", now),
        Reason.WRONG_PASSWORD,
        "invalid_argument",
        /password does not open/,
      ],
      ["not PKCS#12", () => openPfx(Buffer.from("not a pfx at all"), "x", now), Reason.NOT_PKCS12, "invalid_argument", /not a PKCS#12/],
      [
        "a certificate DER",
        () => openPfx(Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(good.cert)).getBytes(), "binary"), "x", now),
        Reason.NOT_PKCS12,
        "invalid_argument",
        /not a PKCS#12/,
      ],
      ["empty", () => openPfx(Buffer.alloc(0), "x", now), Reason.NOT_PKCS12, "invalid_argument", /pfx is empty/],
      ["too large", () => openPfx(Buffer.alloc(MAX_PFX_BYTES + 1), "x", now), Reason.TOO_LARGE, "invalid_argument", /limit is 65536/],
      ["no key", () => openPfx(toPfxWith(null, [good], "x"), "x", now), Reason.NO_PRIVATE_KEY, "invalid_argument", /no private key/],
      [
        "mismatch",
        () => openPfx(toPfxWith(other.key === good.key ? root.key : other.key, [good], "x"), "x", now),
        Reason.KEY_MISMATCH,
        "invalid_argument",
        /does not match/,
      ],
      [
        "expired",
        () =>
          openPfx(
            toPfx(
              issueEcnpj(root, {
                cnpj: "11222333000181",
                notBefore: new Date(now.getTime() - 30 * day),
                notAfter: new Date(now.getTime() - day),
              }),
              [],
              "x",
            ),
            "x",
            now,
          ),
        Reason.EXPIRED,
        "failed_precondition",
        /expired at/,
      ],
      [
        "not yet valid",
        () => openPfx(toPfx(issueEcnpj(root, { cnpj: "11222333000181", notBefore: new Date(now.getTime() + day) }), [], "x"), "x", now),
        Reason.NOT_YET_VALID,
        "failed_precondition",
        /not valid before/,
      ],
      [
        "no client auth",
        () => openPfx(toPfx(issueEcnpj(root, { cnpj: "11222333000181", clientAuth: false }), [], "x"), "x", now),
        Reason.NO_CLIENT_AUTH,
        "invalid_argument",
        /client-authentication/,
      ],
      [
        "no CNPJ",
        () => openPfx(toPfx(issueCustom(root, { commonName: "SEM DOCUMENTO" }), [], "x"), "x", now),
        Reason.CNPJ_NOT_FOUND,
        "invalid_argument",
        /no CNPJ/,
      ],
    ];
    for (const [name, fn, reason, code, message] of cases) {
      const err = refusal(fn).toConnectError();
      expect({ name, reason: refusal(fn).reason, code: codeName(err.code) }).toEqual({ name, reason, code });
      expect(err.rawMessage, name).toMatch(message);
      expect(err.rawMessage, name).not.toMatch(/certa|errada/);
    }
  });

  it("refuses a PFX asking for an absurd key-derivation iteration count before deriving anything", () => {
    const asn1 = forge.asn1.fromDer(toPfx(issueEcnpj(root, { cnpj: "11222333000181" }), [], "x").toString("binary"));
    const macData = (asn1.value as forge.asn1.Asn1[])[2]!;
    (macData.value as forge.asn1.Asn1[])[2]!.value = forge.asn1.integerToDer(50_000_000).getBytes();
    const hostile = Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary");
    const err = refusal(() => openPfx(hostile, "x", now));
    expect(err.reason).toBe(Reason.NOT_PKCS12);
    expect(err.message).toMatch(/more than 1000000 key-derivation iterations/);
  });

  it("finds a CNPJ in formatted or plain text, numeric or alphanumeric, and nothing in shorter runs or plain words", () => {
    expect(cnpjInText("EMPRESA:11222333000181")).toBe("11222333000181");
    expect(cnpjInText("X 11.222.333/0001-81")).toBe("11222333000181");
    expect(cnpjInText("CPF 12345678901")).toBeUndefined();
    expect(cnpjInText("NOVA EMPRESA LTDA:12ABC34501DE35")).toBe("12ABC34501DE35");
    expect(cnpjInText("NOVA EMPRESA 12.ABC.345/01DE-35")).toBe("12ABC34501DE35");
    expect(cnpjInText("CONSTRUTORA ABCDEFGHIJKL SA")).toBeUndefined();
    expect(cnpjInText("EMPRESA:12ABC34501DE36")).toBeUndefined();
  });

  // Since 2026 a CNPJ may have letters in its first 12 places (IN RFB 2.229/2024); certificates carry it
  // in the otherName and in the CN like a numeric one.
  it.each(["utf8", "printable", "octet"] as const)("imports an alphanumeric CNPJ from the otherName encoded as %s", (encoding) => {
    const leaf = issueEcnpj(root, { cnpj: "12ABC34501DE35", otherNameEncoding: encoding });
    expect(openPfx(toPfx(leaf, [root], "x"), "x", now)).toMatchObject({ cnpj: "12ABC34501DE35", cnpjSource: "otherName" });
  });

  it("imports an alphanumeric CNPJ from the subject CN, masked or not, when there is no otherName", () => {
    for (const cn of ["NOVA EMPRESA LTDA:AB12CD34000184", "NOVA EMPRESA LTDA:AB.12C.D34/0001-84"]) {
      const leaf = issueCustom(root, { commonName: cn });
      expect(openPfx(toPfx(leaf, [], "x"), "x", now)).toMatchObject({ cnpj: "AB12CD34000184", cnpjSource: "commonName" });
    }
  });

  it.each([
    [
      "a wrong check digit in the otherName",
      { cnpj: "12ABC34501DE36" },
      /otherName 2\.16\.76\.1\.3\.3 holds "12ABC34501DE36", which has a wrong check digit/,
    ],
    ["lower-case letters in the otherName", { cnpj: "12abc34501de35" }, /holds "12abc34501de35", which has lower-case letters/],
    ["letters in the check digits", { cnpj: "12ABC34501DE3X" }, /which has letters in its check digits/],
    ["a short otherName", { cnpj: "12ABC34501DE3" }, /which must be 14 characters/],
    ["a numeric CNPJ with a wrong check digit", { cnpj: "11222333000182" }, /which has a wrong check digit/],
  ] as const)("refuses a certificate with %s, naming the value and the problem", (_name, opts, message) => {
    const leaf = issueCustom(root, { commonName: "EMPRESA:11222333000181", ...opts });
    const err = refusal(() => openPfx(toPfx(leaf, [], "x"), "x", now));
    expect(err.reason).toBe(Reason.INVALID_CNPJ);
    expect(err.toConnectError().rawMessage).toMatch(message);
  });

  it("refuses a CN-only certificate whose CNPJ is malformed", () => {
    const leaf = issueCustom(root, { commonName: "NOVA EMPRESA LTDA:12abc34501de35" });
    const err = refusal(() => openPfx(toPfx(leaf, [], "x"), "x", now));
    expect(err.reason).toBe(Reason.INVALID_CNPJ);
    expect(err.message).toMatch(/the subject CN holds "12abc34501de35", which has lower-case letters/);
  });
});

function codeName(code: number): string {
  return (
    [
      "ok",
      "canceled",
      "unknown",
      "invalid_argument",
      "deadline_exceeded",
      "not_found",
      "already_exists",
      "permission_denied",
      "resource_exhausted",
      "failed_precondition",
    ][code] ?? String(code)
  );
}
