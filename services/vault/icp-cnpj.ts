import forge from "node-forge";

/** ICP-Brasil otherName holding the CNPJ of an e-CNPJ certificate's holder. */
export const OID_ICP_CNPJ = "2.16.76.1.3.3";
const OID_SUBJECT_ALT_NAME = "2.5.29.17";

export type CnpjSource = "otherName" | "commonName";

/**
 * The holder's CNPJ (14 digits): from the otherName 2.16.76.1.3.3 of the subjectAltName, else from the
 * subject CN (e-CNPJ CNs read "RAZAO SOCIAL:CNPJ"). The otherName value is a UTF8String,
 * PrintableString or OCTET STRING depending on the issuing AC, so the string is read whatever its tag.
 */
export function findCnpj(certDer: Buffer, commonName: string | undefined): { cnpj: string; source: CnpjSource } | undefined {
  const fromOtherName = otherNameCnpj(certDer);
  if (fromOtherName) return { cnpj: fromOtherName, source: "otherName" };
  const fromCn = commonName ? cnpjInText(commonName) : undefined;
  return fromCn ? { cnpj: fromCn, source: "commonName" } : undefined;
}

/** The last CNPJ-shaped run in a text (plain 14 digits or 00.000.000/0000-00), after ":" by convention. */
export function cnpjInText(text: string): string | undefined {
  const matches = [...text.matchAll(/(?<!\d)(\d{2}\.?\d{3}\.?\d{3}\/?\d{4}-?\d{2})(?!\d)/g)];
  const last = matches.at(-1)?.[1];
  return last?.replace(/\D/g, "");
}

function otherNameCnpj(certDer: Buffer): string | undefined {
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
    const digits = forge.util.decodeUtf8(inner.value).replace(/\D/g, "");
    // ICP-Brasil's e-CNPJ profile puts exactly the 14-digit CNPJ here.
    if (/^\d{14}$/.test(digits)) return digits;
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
