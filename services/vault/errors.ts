// Why the vault refuses client credentials, as a malha.common.v1.ErrorInfo (domain "malha.vault"): the
// ADN gateway switches on the reason, never on the message (vault.proto, GetClientCredentials).
import { Code, type ConnectError } from "@connectrpc/connect";
import { reasonedError } from "../../libs/rpc/errors.js";

export const VAULT_ERROR_DOMAIN = "malha.vault";

export type CredentialsRefusal = "NO_ACTIVE_CERTIFICATE" | "CERTIFICATE_EXPIRED" | "MASTER_KEY_NOT_CONFIGURED" | "CIPHERTEXT_TAMPERED";

const CODES: Record<CredentialsRefusal, Code> = {
  NO_ACTIVE_CERTIFICATE: Code.NotFound,
  CERTIFICATE_EXPIRED: Code.FailedPrecondition,
  MASTER_KEY_NOT_CONFIGURED: Code.FailedPrecondition,
  CIPHERTEXT_TAMPERED: Code.DataLoss,
};

export function credentialsRefused(reason: CredentialsRefusal, message: string, metadata: Record<string, string> = {}): ConnectError {
  return reasonedError(VAULT_ERROR_DOMAIN, message, CODES[reason], reason, metadata);
}
