// The CNPJ an ICP-Brasil e-CNPJ certificate is issued to, read the same way by the vault (on import),
// the ADN gateway (credentials from a directory) and the ADN simulator (who is calling).
import type { X509Certificate } from "node:crypto";
import forge from "node-forge";
import { cnpjProblem, isValidCnpj, stripTaxIdMask } from "./index.js";

/** ICP-Brasil otherName holding the CNPJ of an e-CNPJ certificate's holder. */
export const OID_ICP_CNPJ = "2.16.76.1.3.3";
const OID_SUBJECT_ALT_NAME = "2.5.29.17";

export type CnpjSource = "otherName" | "commonName";

/** A CNPJ read from a certificate, or why what the certificate holds there is not one. */
export type CnpjFinding = { cnpj: string; source: CnpjSource } | { source: CnpjSource; problem: string };

/**
 * The holder's CNPJ — 14 characters, numeric or alphanumeric (IN RFB 2.229/2024: 12 of [0-9A-Z] and 2
 * numeric check digits, libs/tax-id) — from the otherName 2.16.76.1.3.3 of the subjectAltName, else from
 * the subject CN (e-CNPJ CNs read "RAZAO SOCIAL:CNPJ"). The otherName value is a UTF8String,
 * PrintableString or OCTET STRING depending on the issuing AC, so the string is read whatever its tag.
 * The otherName, when present, is authoritative: a malformed one is reported, not replaced by the CN.
 * Undefined when neither holds anything CNPJ-like.
 */
export function findCnpj(certDer: Buffer, commonName: string | undefined): CnpjFinding | undefined {
  const fromOtherName = otherNameValue(certDer);
  if (fromOtherName !== undefined) {
    const value = stripTaxIdMask(fromOtherName.trim());
    const problem = cnpjProblem(value);
    if (problem === undefined) return { cnpj: value, source: "otherName" };
    return {
      source: "otherName",
      problem: `the ICP-Brasil otherName 2.16.76.1.3.3 holds ${JSON.stringify(fromOtherName.slice(0, 40))}, which ${problem}`,
    };
  }
  if (!commonName) return undefined;
  const candidate = cnpjCandidateInText(commonName);
  if (candidate === undefined) return undefined;
  const problem = cnpjProblem(candidate);
  if (problem === undefined) return { cnpj: candidate, source: "commonName" };
  return { source: "commonName", problem: `the subject CN holds ${JSON.stringify(candidate)}, which ${problem}` };
}

/** findCnpj for a parsed certificate: its DER and the most specific CN of its subject. */
export function certificateCnpj(cert: X509Certificate): CnpjFinding | undefined {
  const commonName = cert.subject
    .split("\n")
    .findLast((a) => a.startsWith("CN="))
    ?.slice(3);
  return findCnpj(cert.raw, commonName);
}

// A CNPJ-shaped run: plain (14 characters) or masked ("12.ABC.345/01DE-35"), not inside a longer word.
// Case-insensitive on purpose, so that a lower-case CNPJ is found and refused by name, not missed.
const CANDIDATE = /(?<![0-9A-Za-z])([0-9A-Za-z]{2}\.?[0-9A-Za-z]{3}\.?[0-9A-Za-z]{3}\/?[0-9A-Za-z]{4}-?[0-9A-Za-z]{2})(?![0-9A-Za-z])/g;

/**
 * The CNPJ-shaped run of a text, bare: the one after the last ":" by the e-CNPJ convention, else the
 * last run that has digits in its check-digit places (a name like "CONSTRUTORAS SA" is never one).
 */
export function cnpjCandidateInText(text: string): string | undefined {
  const colon = text.lastIndexOf(":");
  if (colon >= 0) {
    const after = stripTaxIdMask(text.slice(colon + 1).trim());
    if (/^[0-9A-Za-z]{14}$/.test(after)) return after;
  }
  const runs = [...text.matchAll(CANDIDATE)]
    .map((m) => stripTaxIdMask(m[1]!))
    .filter((r) => /[0-9]{2}$/.test(r) && /[0-9]/.test(r.slice(0, 12)));
  return runs.at(-1);
}

/** The valid CNPJ of a text (plain or masked, numeric or alphanumeric), if it holds one. */
export function cnpjInText(text: string): string | undefined {
  const candidate = cnpjCandidateInText(text);
  return candidate !== undefined && isValidCnpj(candidate) ? candidate : undefined;
}

/** The otherName 2.16.76.1.3.3 value as text, whatever string type the AC used; undefined when absent. */
function otherNameValue(certDer: Buffer): string | undefined {
  const san = extensionValue(certDer, OID_SUBJECT_ALT_NAME);
  if (san === undefined) return undefined;
  let names: forge.asn1.Asn1;
  try {
    names = forge.asn1.fromDer(san, false);
  } catch {
    return undefined;
  }
  for (const name of children(names)) {
    // otherName is [0] IMPLICIT SEQUENCE { type-id OID, value [0] EXPLICIT ANY }
    if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0) continue;
    const [oid, wrapped] = children(name);
    if (!oid || typeof oid.value !== "string" || forge.asn1.derToOid(oid.value) !== OID_ICP_CNPJ) continue;
    const inner = wrapped ? children(wrapped)[0] : undefined;
    if (!inner || typeof inner.value !== "string") continue;
    try {
      return forge.util.decodeUtf8(inner.value);
    } catch {
      return inner.value;
    }
  }
  return undefined;
}

/** The DER value (inside the OCTET STRING) of a certificate extension, as a forge binary string. */
function extensionValue(certDer: Buffer, oid: string): string | undefined {
  let cert: forge.asn1.Asn1;
  try {
    cert = forge.asn1.fromDer(certDer.toString("binary"), false);
  } catch {
    return undefined;
  }
  const tbs = children(cert)[0];
  if (!tbs) return undefined;
  const wrapper = children(tbs).find((c) => c.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && c.type === 3);
  const extensions = wrapper ? children(children(wrapper)[0]) : [];
  for (const ext of extensions) {
    const parts = children(ext);
    const id = parts[0];
    if (!id || typeof id.value !== "string" || forge.asn1.derToOid(id.value) !== oid) continue;
    const octets = parts.at(-1);
    return octets && typeof octets.value === "string" ? octets.value : undefined;
  }
  return undefined;
}

function children(node: forge.asn1.Asn1 | undefined): forge.asn1.Asn1[] {
  return node && Array.isArray(node.value) ? node.value : [];
}
