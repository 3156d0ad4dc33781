// Who is calling: the CNPJ of the client certificate (ICP-Brasil otherName 2.16.76.1.3.3, else the
// "RAZAO:CNPJ" CN), and the certificate problems the ADN reports with its own codes (adn.md §1.4).
import type { TLSSocket } from "node:tls";
import forge from "node-forge";

export type Identity = { ok: true; cnpj: string } | { ok: false; codigo: string; descricao: string };

const OID_ICP_CNPJ = "2.16.76.1.3.3";
const cache = new Map<string, string | undefined>();

function cnpjOf(raw: Buffer): string | undefined {
  const cert = forge.pki.certificateFromAsn1(forge.asn1.fromDer(raw.toString("binary")));
  const san = cert.getExtension("subjectAltName") as { altNames?: { type: number; value: unknown }[] } | undefined;
  for (const name of san?.altNames ?? []) {
    if (name.type !== 0 || !Array.isArray(name.value)) continue;
    const [oid, wrapped] = name.value as forge.asn1.Asn1[];
    if (!oid || forge.asn1.derToOid(oid.value as string) !== OID_ICP_CNPJ) continue;
    const inner = Array.isArray(wrapped?.value) ? (wrapped.value[0] as forge.asn1.Asn1 | undefined) : undefined;
    const digits = typeof inner?.value === "string" ? inner.value.replace(/\D/g, "") : "";
    if (/^\d{14}$/.test(digits)) return digits;
  }
  const cn = cert.subject.getField("CN")?.value as string | undefined;
  return /:(\d{14})$/.exec(cn ?? "")?.[1];
}

export function identify(socket: TLSSocket): Identity {
  const peer = socket.getPeerCertificate(false);
  if (!peer || !peer.raw) return { ok: false, codigo: "E2000", descricao: "Certificado digital do transmissor não informado." };
  const err = socket.authorizationError as unknown as string | undefined;
  if (err === "CERT_HAS_EXPIRED") return { ok: false, codigo: "E1203", descricao: "Certificado de transmissão com data de validade expirada." };
  if (err) return { ok: false, codigo: "E1205", descricao: "Cadeia de certificação do certificado de transmissão inválida." };
  const fp = peer.fingerprint256;
  if (!cache.has(fp)) cache.set(fp, cnpjOf(peer.raw));
  const cnpj = cache.get(fp);
  if (!cnpj) return { ok: false, codigo: "E1209", descricao: "Certificado de transmissão sem CNPJ (OtherName 2.16.76.1.3.3)." };
  return { ok: true, cnpj };
}
