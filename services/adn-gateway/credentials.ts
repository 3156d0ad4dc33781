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
