import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import forge from "node-forge";
import { ImportRejectionReason as Reason } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { certificateCnpj, type CnpjSource } from "../../libs/tax-id/icp-certificate.js";
import { ImportRefusal } from "./import-refusal.js";

/** Real A1 files are a few KiB; anything this large is not one and would only cost parsing time. */
export const MAX_PFX_BYTES = 64 * 1024;
export const MAX_PASSWORD_LENGTH = 1024;
/**
 * node-forge derives PKCS#12 keys in JavaScript on the event loop; a file may ask for any iteration
 * count, so a hostile one could stall the vault. Real files use 2 000–100 000.
 */
export const MAX_KDF_ITERATIONS = 1_000_000;

const OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const OID_ANY_EKU = "2.5.29.37.0";

/** Everything the vault keeps from a PFX. `privateKeyPem` and the original bytes are secrets. */
export interface OpenedPfx {
  leaf: X509Certificate;
  /** PKCS#8 PEM, unencrypted. */
  privateKeyPem: string;
  /** Leaf first, then its issuers found in the PFX, in order. */
  chainPem: string;
  chainLength: number;
  /** RFC 4514 (most specific attribute first). */
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  fingerprint: string;
  cnpj: string;
  cnpjSource: CnpjSource;
}

/**
 * Opens a PKCS#12 with node-forge (which, unlike Node's OpenSSL 3, still reads the RC2-40 and 3DES
 * files Brazilian tooling produces) and checks it is usable as an ADN client credential at `now`.
 * Throws ImportRefusal with the precise reason; never includes the password or key material in messages.
 */
export function openPfx(pfx: Uint8Array, password: string, now: Date): OpenedPfx {
  if (pfx.length === 0) throw new ImportRefusal(Reason.NOT_PKCS12, "pfx is empty");
  if (pfx.length > MAX_PFX_BYTES) {
    throw new ImportRefusal(Reason.TOO_LARGE, `pfx is ${pfx.length} bytes; the limit is ${MAX_PFX_BYTES}`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new ImportRefusal(Reason.WRONG_PASSWORD, `password is longer than ${MAX_PASSWORD_LENGTH} characters`);
  }
  const p12 = decodePkcs12(pfx, password);
  const keys = privateKeys(p12);
  if (keys.length === 0) throw new ImportRefusal(Reason.NO_PRIVATE_KEY, "the PFX holds no private key");
  const certs = certificates(p12);
  if (certs.length === 0) throw new ImportRefusal(Reason.KEY_MISMATCH, "the PFX holds a private key but no certificate");

  const match = findLeaf(keys, certs);
  if (!match) {
    throw new ImportRefusal(Reason.KEY_MISMATCH, "the private key does not match the certificate in the PFX");
  }
  const { leaf, key } = match;
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (now.getTime() >= notAfter.getTime()) {
    throw new ImportRefusal(Reason.EXPIRED, `the certificate expired at ${notAfter.toISOString()}`);
  }
  if (now.getTime() < notBefore.getTime()) {
    throw new ImportRefusal(Reason.NOT_YET_VALID, `the certificate is not valid before ${notBefore.toISOString()}`);
  }
  const usages = leaf.keyUsage ?? [];
  if (!usages.includes(OID_CLIENT_AUTH) && !usages.includes(OID_ANY_EKU)) {
    throw new ImportRefusal(
      Reason.NO_CLIENT_AUTH,
      "the certificate has no TLS client-authentication extended key usage (1.3.6.1.5.5.7.3.2); the ADN refuses it (E1200)",
    );
  }
  const found = certificateCnpj(leaf);
  if (!found) {
    throw new ImportRefusal(
      Reason.CNPJ_NOT_FOUND,
      "no CNPJ in the certificate: neither the ICP-Brasil otherName 2.16.76.1.3.3 nor the subject CN holds one (14 characters, 12 of 0-9/A-Z and 2 check digits)",
    );
  }
  if ("problem" in found) throw new ImportRefusal(Reason.INVALID_CNPJ, `the certificate's CNPJ is malformed: ${found.problem}`);
  const chain = chainFrom(leaf, certs);
  return {
    leaf,
    privateKeyPem: key.export({ type: "pkcs8", format: "pem" }).toString(),
    chainPem: chain.map((c) => c.toString()).join(""),
    chainLength: chain.length,
    subject: rfc4514(leaf.subject),
    issuer: rfc4514(leaf.issuer),
    serialNumber: leaf.serialNumber.toLowerCase(),
    notBefore,
    notAfter,
    fingerprint: leaf.fingerprint256.replace(/:/g, "").toLowerCase(),
    cnpj: found.cnpj,
    cnpjSource: found.source,
  };
}

function decodePkcs12(pfx: Uint8Array, password: string): forge.pkcs12.Pkcs12Pfx {
  let asn1: forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(forge.util.binary.raw.encode(pfx), false);
  } catch {
    throw new ImportRefusal(Reason.NOT_PKCS12, "the file is not a PKCS#12 (PFX): it is not DER/BER encoded");
  }
  const attempt = (pw: string | null) => withIterationLimit(() => forge.pkcs12.pkcs12FromAsn1(asn1, false, pw as string));
  try {
    return attempt(password);
  } catch (err) {
    const refusal = classify(err);
    // An empty password is written two ways (an empty BMPString, or none at all); try the other one.
    if (password === "" && refusal.reason === Reason.WRONG_PASSWORD) {
      try {
        return attempt(null);
      } catch {
        throw refusal;
      }
    }
    throw refusal;
  }
}

function classify(err: unknown): ImportRefusal {
  if (err instanceof ImportRefusal) return err;
  const message = err instanceof Error ? err.message : "";
  if (/not an PKCS#12 PFX|Cannot read PKCS#12 PFX/.test(message)) {
    return new ImportRefusal(Reason.NOT_PKCS12, "the file is not a PKCS#12 (PFX) structure");
  }
  if (/integrity mode/.test(message)) {
    return new ImportRefusal(Reason.NOT_PKCS12, "the PFX uses public-key integrity mode; only password integrity is supported");
  }
  if (/Unsupported|unsupported/.test(message)) {
    return new ImportRefusal(Reason.NOT_PKCS12, `the PFX uses an unsupported feature (${message.replace(/\s+/g, " ").slice(0, 120)})`);
  }
  // With the outer structure valid, anything else (MAC mismatch, undecryptable bags, garbage after
  // decryption) means the password does not open it.
  return new ImportRefusal(Reason.WRONG_PASSWORD, "the password does not open the PFX (MAC or decryption failed)");
}

interface CapturedBag {
  key?: forge.pki.PrivateKey | null;
  cert?: forge.pki.Certificate | null;
  asn1?: forge.asn1.Asn1;
}

function bags(p12: forge.pkcs12.Pkcs12Pfx, bagType: string): CapturedBag[] {
  return (p12.getBags({ bagType }) as Record<string, CapturedBag[] | undefined>)[bagType] ?? [];
}

function privateKeys(p12: forge.pkcs12.Pkcs12Pfx): KeyObject[] {
  const found = [...bags(p12, forge.pki.oids.pkcs8ShroudedKeyBag!), ...bags(p12, forge.pki.oids.keyBag!)];
  const keys: KeyObject[] = [];
  for (const bag of found) {
    // forge decodes RSA keys; other key types come back as their PrivateKeyInfo ASN.1.
    const info = bag.key ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key as forge.pki.rsa.PrivateKey)) : bag.asn1;
    if (!info) continue;
    try {
      keys.push(createPrivateKey({ key: derBuffer(info), format: "der", type: "pkcs8" }));
    } catch {
      // An unreadable key bag is treated like an absent key.
    }
  }
  return keys;
}

function certificates(p12: forge.pkcs12.Pkcs12Pfx): X509Certificate[] {
  const certs: X509Certificate[] = [];
  for (const bag of bags(p12, forge.pki.oids.certBag!)) {
    // forge keeps the parsed TBSCertificate, so re-encoding reproduces the file's DER for RSA certificates.
    const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : bag.asn1;
    if (!asn1) continue;
    try {
      certs.push(new X509Certificate(derBuffer(asn1)));
    } catch {
      // Not an X.509 certificate Node can read: it cannot be the leaf nor part of a usable chain.
    }
  }
  return certs;
}

function findLeaf(keys: KeyObject[], certs: X509Certificate[]): { leaf: X509Certificate; key: KeyObject } | undefined {
  const ordered = [...certs.filter((c) => !c.ca), ...certs.filter((c) => c.ca)];
  for (const key of keys) {
    for (const cert of ordered) {
      try {
        if (cert.checkPrivateKey(key)) return { leaf: cert, key };
      } catch {
        // Different key types: not a match.
      }
    }
  }
  return undefined;
}

/** The leaf and, in order, each issuer the PFX contains; unrelated certificates are left out. */
function chainFrom(leaf: X509Certificate, certs: X509Certificate[]): X509Certificate[] {
  const chain = [leaf];
  const remaining = certs.filter((c) => c !== leaf && c.fingerprint256 !== leaf.fingerprint256);
  for (let current = leaf; current.subject !== current.issuer; ) {
    const index = remaining.findIndex((c) => current.checkIssued(c) && current.verify(c.publicKey));
    if (index < 0) break;
    current = remaining.splice(index, 1)[0]!;
    chain.push(current);
  }
  return chain;
}

/**
 * Node prints a DN one attribute per line, most general first, values already escaped as RFC 2253/4514
 * asks; RFC 4514 order is the reverse, comma-separated.
 */
function rfc4514(dn: string): string {
  return dn.split("\n").filter(Boolean).reverse().join(",");
}

function derBuffer(asn1: forge.asn1.Asn1): Buffer {
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), "binary");
}

class IterationLimitError extends Error {}

/** Runs forge with its key-derivation functions refusing absurd iteration counts. */
function withIterationLimit<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof IterationLimitError) {
      throw new ImportRefusal(Reason.NOT_PKCS12, `the PFX asks for more than ${MAX_KDF_ITERATIONS} key-derivation iterations`);
    }
    throw err;
  }
}

// The guards wrap forge's key-derivation entry points once per process; only the vault runs forge
// on untrusted files, and the wrappers change nothing for counts within the limit.
type Kdf = (...args: never[]) => unknown;
function guard(owner: Record<string, unknown>, name: string, iterationsArg: number): void {
  const original = owner[name] as Kdf & { malhaGuarded?: boolean };
  if (typeof original !== "function" || original.malhaGuarded) return;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const iterations = Number(args[iterationsArg]);
    if (!(iterations <= MAX_KDF_ITERATIONS)) throw new IterationLimitError();
    return (original as unknown as (...a: unknown[]) => unknown).apply(this, args);
  } as Kdf & { malhaGuarded?: boolean };
  wrapped.malhaGuarded = true;
  owner[name] = wrapped;
}
const forgeAny = forge as unknown as {
  pki: { pbe: Record<string, unknown> };
  pkcs12: Record<string, unknown>;
  pkcs5: Record<string, unknown>;
};

/**
 * Passwords are UTF-8 (what `openssl pkcs12` and Windows write). The two PKCS#12 schemes take them
 * differently: the MAC and the legacy PBEs (3DES, RC2) derive keys from the password as a BMPString,
 * which forge builds from the JavaScript string correctly; PBES2/PBKDF2 (OpenSSL 3's default AES-256)
 * takes the password as octets, and forge would use each UTF-16 code unit as one byte (Latin-1), so
 * "Senha@ção" failed to decrypt. PBES2 gets the UTF-8 bytes instead.
 */
function utf8ForPbes2(owner: Record<string, unknown>): void {
  const original = owner.getCipherForPBES2 as ((oid: string, params: unknown, password: string) => unknown) & { malhaUtf8?: boolean };
  if (typeof original !== "function" || original.malhaUtf8) return;
  const wrapped = function (this: unknown, oid: string, params: unknown, password: string) {
    return original.call(this, oid, params, forge.util.encodeUtf8(password));
  } as typeof original;
  wrapped.malhaUtf8 = true;
  owner.getCipherForPBES2 = wrapped;
}
utf8ForPbes2(forgeAny.pki.pbe);
guard(forgeAny.pki.pbe, "generatePkcs12Key", 3);
guard(forgeAny.pkcs12, "generateKey", 3);
guard(forgeAny.pkcs5, "pbkdf2", 2);
