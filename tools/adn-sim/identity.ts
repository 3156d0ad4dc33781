// Who is calling: the CNPJ of the client certificate (ICP-Brasil otherName 2.16.76.1.3.3, else the
// "RAZAO:CNPJ" CN), and the certificate problems the ADN reports with its own codes (adn.md §1.4).
import type { X509Certificate } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { certificateCnpj } from "../../libs/tax-id/icp-certificate.js";

export type Identity = { ok: true; cnpj: string } | { ok: false; codigo: string; descricao: string };

const cache = new Map<string, string | undefined>();

/** The holder's CNPJ (numeric or alphanumeric, IN RFB 2.229/2024), read like the vault reads it. */
function cnpjOf(cert: X509Certificate): string | undefined {
  const found = certificateCnpj(cert);
  return found && "cnpj" in found ? found.cnpj : undefined;
}

/**
 * The identity of each connection, read once: a run's calls share one. The certificate is read as an
 * X509Certificate, whose fields are decoded only when asked for (getPeerCertificate decodes them all
 * into an object, ≈ 12 % of the simulator's CPU in the fleet bench's sweep).
 */
const bySocket = new WeakMap<TLSSocket, Identity>();

export function identify(socket: TLSSocket): Identity {
  let identity = bySocket.get(socket);
  if (!identity) {
    identity = identifyPeer(socket);
    bySocket.set(socket, identity);
  }
  return identity;
}

function identifyPeer(socket: TLSSocket): Identity {
  const peer = socket.getPeerX509Certificate();
  if (!peer) return { ok: false, codigo: "E2000", descricao: "Certificado digital do transmissor não informado." };
  const err = socket.authorizationError as unknown as string | undefined;
  if (err === "CERT_HAS_EXPIRED")
    return { ok: false, codigo: "E1203", descricao: "Certificado de transmissão com data de validade expirada." };
  if (err) return { ok: false, codigo: "E1205", descricao: "Cadeia de certificação do certificado de transmissão inválida." };
  const fp = peer.fingerprint256;
  if (!cache.has(fp)) cache.set(fp, cnpjOf(peer));
  const cnpj = cache.get(fp);
  if (!cnpj) return { ok: false, codigo: "E1209", descricao: "Certificado de transmissão sem CNPJ (OtherName 2.16.76.1.3.3)." };
  return { ok: true, cnpj };
}
