// Where the gateway gets each municipality's mTLS credentials. The vault is the production source; a
// directory of PEM files serves development and tests without a vault. Key material stays in memory.
import { X509Certificate } from "node:crypto";
import type { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import type { ClientCredentials } from "../../libs/adn/http.js";
import { certificateCnpj } from "../../libs/tax-id/icp-certificate.js";

export interface CredentialSet extends ClientCredentials {
  /** Changes whenever the municipality's credentials change; keys the connection pool. */
  version: string;
  certificateId: string;
  notAfter: Date;
  /** CNPJ of the certificate holder ("" when the source does not know it). */
  cnpj: string;
}

export interface CredentialSource {
  /** For the start-up log line: which source, never any secret. */
  readonly description: string;
  /**
   * The municipality's current credentials. Throws CredentialsUnavailableError when there is no usable
   * certificate, or a ConnectError (UNAVAILABLE…) when the source cannot be reached.
   */
  get(ibge: string, signal?: AbortSignal): Promise<CredentialSet>;
  close(): void;
}

export class CredentialsUnavailableError extends Error {
  override name = "CredentialsUnavailableError";
  constructor(
    readonly problem: CredentialsProblem,
    message: string,
    readonly certificateId = "",
  ) {
    super(message);
  }
}

/** A PEM certificate block, BEGIN to END line. */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The chain the gateway presents: the leaf and what follows it, less any self-signed certificate after the
 * leaf. A trust anchor is the ADN's to hold, and TLS lets the client leave it out (RFC 8446 §4.4.2, RFC
 * 5246 §7.4.2); an ICP-Brasil A1 file usually carries its root, and each TLS context a certificate's pool
 * builds parses every certificate of the chain again (docs/decisions/0047-chains-presented-without-their-root.md).
 * Text that does not parse is left as it is: the TLS context then refuses it as before.
 */
export function presentedChain(chainPem: string): string {
  const blocks = chainPem.match(PEM_CERTIFICATE);
  if (!blocks || blocks.length < 2) return chainPem;
  try {
    const kept = blocks.filter((block, i) => {
      if (i === 0) return true;
      const cert = new X509Certificate(block);
      return !(cert.checkIssued(cert) && cert.verify(cert.publicKey));
    });
    return kept.length === blocks.length ? chainPem : `${kept.join("\n")}\n`;
  } catch {
    return chainPem;
  }
}

/**
 * Facts about the leaf (first certificate of the chain): validity end, fingerprint, and the holder's
 * CNPJ — numeric or alphanumeric, from the ICP-Brasil otherName or the CN, read as the vault reads it;
 * "" when the certificate holds no valid one (the ADN then answers E1209 itself).
 */
export function leafFacts(chainPem: string): { notAfter: Date; fingerprint: string; cnpj: string } {
  const leaf = new X509Certificate(chainPem);
  const found = certificateCnpj(leaf);
  const cnpj = found && "cnpj" in found ? found.cnpj : "";
  return { notAfter: new Date(leaf.validTo), fingerprint: leaf.fingerprint256.replace(/:/g, "").toLowerCase(), cnpj };
}
