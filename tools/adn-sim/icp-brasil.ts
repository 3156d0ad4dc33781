// ICP-Brasil-shaped test certificates (never committed, made at test time): a test root CA, e-CNPJ A1
// client certificates with the CNPJ in the subjectAltName otherName 2.16.76.1.3.3, server certificates
// for simulators, and PKCS#12 (PFX) files. Real ICP-Brasil PFX files often use legacy encryption
// (3DES, RC2-40); `toPfx` can produce 3DES directly and `toLegacyPfx` re-wraps with RC2-40 via openssl.
import { execFileSync } from "node:child_process";
import { createHash, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";

export const OID_ICP_CNPJ = "2.16.76.1.3.3";

export interface Issued {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  certPem: string;
  keyPem: string;
  /** SHA-256 of the DER certificate, lowercase hex. */
  fingerprint256: string;
}

export interface IssueOptions {
  commonName: string;
  notBefore?: Date;
  notAfter?: Date;
  /** Include the ICP-Brasil CNPJ otherName (default: when `cnpj` is given). */
  cnpj?: string;
  /** How the otherName value is encoded; real certificates vary, so parsers must accept all three. */
  otherNameEncoding?: "utf8" | "printable" | "octet";
  /** Extended key usage clientAuth (default true for client certificates). */
  clientAuth?: boolean;
  /** DNS names / IPs for server certificates. */
  serverNames?: string[];
  /** Sign with this key instead of the certificate's own (to make a key/cert mismatch). */
  ca?: Issued;
}

const keyCache: forge.pki.rsa.KeyPair[] = [];
const pemCache = new WeakMap<forge.pki.rsa.PrivateKey, { pem: string; native: KeyObject }>();
/** RSA-2048 generation dominates test time; a few keys shared per process are enough. */
function keyPair(index: number): forge.pki.rsa.KeyPair {
  while (keyCache.length <= index) keyCache.push(forge.pki.rsa.generateKeyPair(2048));
  return keyCache[index]!;
}
let nextKey = 0;

/** A forge key's PEM and its OpenSSL twin, made once per key (a few keys serve a whole fleet). */
function keyMaterial(key: forge.pki.rsa.PrivateKey): { pem: string; native: KeyObject } {
  let m = pemCache.get(key);
  if (!m) {
    const pem = forge.pki.privateKeyToPem(key);
    m = { pem, native: createPrivateKey(pem) };
    pemCache.set(key, m);
  }
  return m;
}

/**
 * forge's `cert.sign` with the RSA operation done by OpenSSL: PKCS#1 v1.5 signatures are deterministic, so
 * the certificate is byte for byte the one forge would make, ≈ 100× sooner (forge's pure-JS RSA took
 * 4.5 min for the 5,570 certificates of `npm run bench:fleet`).
 */
function signSha256(cert: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey): void {
  cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.siginfo.algorithmOid = cert.signatureOid;
  // getTBSCertificate is forge's own (its cert.sign uses it) but missing from its type declarations.
  cert.tbsCertificate = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  const tbs = forge.asn1.toDer(cert.tbsCertificate).getBytes();
  cert.md = forge.md.sha256.create().update(tbs);
  cert.signature = sign("sha256", Buffer.from(tbs, "binary"), keyMaterial(key).native).toString("binary");
}

function fingerprint(cert: forge.pki.Certificate): string {
  const der = forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes();
  return createHash("sha256").update(Buffer.from(der, "binary")).digest("hex");
}

function otherNameValue(value: string, encoding: NonNullable<IssueOptions["otherNameEncoding"]>): forge.asn1.Asn1 {
  const { asn1 } = forge;
  const type = encoding === "utf8" ? asn1.Type.UTF8 : encoding === "printable" ? asn1.Type.PRINTABLESTRING : asn1.Type.OCTETSTRING;
  return asn1.create(asn1.Class.UNIVERSAL, type, false, value);
}

function subjectAltName(opts: IssueOptions): object | undefined {
  const { asn1 } = forge;
  const names: forge.asn1.Asn1[] = [];
  if (opts.cnpj) {
    names.push(
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(OID_ICP_CNPJ).getBytes()),
        asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [otherNameValue(opts.cnpj, opts.otherNameEncoding ?? "utf8")]),
      ]),
    );
  }
  for (const name of opts.serverNames ?? []) {
    const isIp = /^\d+\.\d+\.\d+\.\d+$/.test(name);
    const value = isIp ? String.fromCharCode(...name.split(".").map(Number)) : name;
    names.push(asn1.create(asn1.Class.CONTEXT_SPECIFIC, isIp ? 7 : 2, false, value));
  }
  if (names.length === 0) return undefined;
  const der = asn1.toDer(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, names)).getBytes();
  return { id: "2.5.29.17", critical: false, value: der };
}

function issue(opts: IssueOptions & { isCa?: boolean; isServer?: boolean }): Issued {
  const pair = keyPair(nextKey++ % 4);
  const cert = forge.pki.createCertificate();
  cert.publicKey = pair.publicKey;
  cert.serialNumber = "01" + forge.util.bytesToHex(forge.random.getBytesSync(9));
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 365 * 24 * 3600_000);
  const subject = [
    { shortName: "C", value: "BR" },
    { shortName: "O", value: "ICP-Brasil" },
    { shortName: "OU", value: opts.isCa ? "Malha Test Root" : "Certificado PJ A1" },
    { shortName: "CN", value: opts.commonName },
  ];
  cert.setSubject(subject);
  cert.setIssuer(opts.ca ? opts.ca.cert.subject.attributes : subject);
  const extensions: object[] = [{ name: "basicConstraints", cA: Boolean(opts.isCa), critical: true }];
  if (opts.isCa) extensions.push({ name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true });
  else {
    extensions.push({ name: "keyUsage", digitalSignature: true, keyEncipherment: true, nonRepudiation: true });
    const eku = opts.isServer
      ? { serverAuth: true }
      : opts.clientAuth === false
        ? { emailProtection: true }
        : { clientAuth: true, emailProtection: true };
    extensions.push({ name: "extKeyUsage", ...eku });
  }
  const san = subjectAltName(opts);
  if (san) extensions.push(san);
  cert.setExtensions(extensions);
  signSha256(cert, opts.ca ? opts.ca.key : pair.privateKey);
  return {
    cert,
    key: pair.privateKey,
    certPem: forge.pki.certificateToPem(cert),
    keyPem: keyMaterial(pair.privateKey).pem,
    fingerprint256: fingerprint(cert),
  };
}

/** A self-signed test root standing in for AC Raiz ICP-Brasil and its intermediates. */
export function createTestRoot(commonName = "AC Raiz Malha Teste"): Issued {
  return issue({ commonName, isCa: true });
}

/** An e-CNPJ A1 client certificate: CN "RAZAO SOCIAL:CNPJ", CNPJ in the otherName. */
export function issueEcnpj(ca: Issued, opts: Omit<IssueOptions, "ca" | "commonName"> & { cnpj: string; razaoSocial?: string }): Issued {
  return issue({ ...opts, ca, commonName: `${opts.razaoSocial ?? "EMPRESA TESTE LTDA"}:${opts.cnpj}` });
}

/** Any certificate shape, for refusal tests (no CNPJ, no client auth, odd CN…). */
export function issueCustom(ca: Issued, opts: Omit<IssueOptions, "ca">): Issued {
  return issue({ ...opts, ca });
}

/** A TLS server certificate (e.g. for the ADN simulator) for the given DNS names / IPs. */
export function issueServer(ca: Issued, serverNames: string[] = ["localhost", "127.0.0.1"]): Issued {
  return issue({ ca, commonName: serverNames[0] ?? "localhost", serverNames, isServer: true });
}

/** PKCS#12 bytes. `algorithm` '3des' gives the legacy pbeWithSHAAnd3-KeyTripleDES-CBC real files use. */
export function toPfx(
  entity: Issued,
  chain: Issued[],
  password: string,
  opts: { algorithm?: "3des" | "aes256"; friendlyName?: string } = {},
): Buffer {
  const p12 = forge.pkcs12.toPkcs12Asn1(entity.key, [entity.cert, ...chain.map((c) => c.cert)], password, {
    algorithm: opts.algorithm ?? "3des",
    friendlyName: opts.friendlyName ?? "malha-test",
  });
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), "binary");
}

/**
 * A PFX with RC2-40 certificate encryption and 3DES key encryption, as produced by old Windows/Java
 * tooling; Node's OpenSSL 3 refuses to open these. Uses the openssl CLI (legacy provider).
 */
export function toLegacyPfx(entity: Issued, chain: Issued[], password: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "malha-pfx-"));
  try {
    writeFileSync(join(dir, "key.pem"), entity.keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert.pem"), entity.certPem + chain.map((c) => c.certPem).join(""));
    writeFileSync(join(dir, "pass"), password, { mode: 0o600 });
    execFileSync(
      "openssl",
      [
        "pkcs12",
        "-export",
        "-legacy",
        "-certpbe",
        "PBE-SHA1-RC2-40",
        "-keypbe",
        "PBE-SHA1-3DES",
        "-inkey",
        join(dir, "key.pem"),
        "-in",
        join(dir, "cert.pem"),
        "-out",
        join(dir, "out.pfx"),
        "-passout",
        `file:${join(dir, "pass")}`,
      ],
      { stdio: "pipe" },
    );
    return readFileSync(join(dir, "out.pfx"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A PFX written by the `openssl pkcs12 -export` CLI, the way operators make them: `aes256` is OpenSSL 3's
 * default (PBES2, PBKDF2-HMAC-SHA256, AES-256-CBC, SHA-256 MAC), `3des` the legacy PKCS#12 PBE with a
 * SHA-1 MAC. The password goes through a file as UTF-8, as a shell would pass it.
 */
export function toOpensslPfx(entity: Issued, chain: Issued[], password: string, cipher: "aes256" | "3des"): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "malha-pfx-"));
  try {
    writeFileSync(join(dir, "key.pem"), entity.keyPem, { mode: 0o600 });
    writeFileSync(join(dir, "cert.pem"), entity.certPem + chain.map((c) => c.certPem).join(""));
    writeFileSync(join(dir, "pass"), password, { mode: 0o600 });
    const algorithms = cipher === "3des" ? ["-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES", "-macalg", "sha1"] : [];
    execFileSync(
      "openssl",
      [
        "pkcs12",
        "-export",
        ...algorithms,
        "-inkey",
        join(dir, "key.pem"),
        "-in",
        join(dir, "cert.pem"),
        "-out",
        join(dir, "out.pfx"),
        "-passout",
        `file:${join(dir, "pass")}`,
      ],
      { stdio: "pipe" },
    );
    return readFileSync(join(dir, "out.pfx"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A 3DES PFX with an explicit key and certificate list, for refusal tests: `key` null gives a PFX
 * without a private key; a key from another Issued gives a key/certificate mismatch.
 */
export function toPfxWith(key: forge.pki.rsa.PrivateKey | null, certs: Issued[], password: string): Buffer {
  const p12 = forge.pkcs12.toPkcs12Asn1(
    key,
    certs.map((c) => c.cert),
    password,
    { algorithm: "3des" },
  );
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), "binary");
}
