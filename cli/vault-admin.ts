// The vault's administrative calls (ImportCertificate and the like) need the admin secret, or under mTLS a
// client certificate the vault lists in VAULT_ADMIN_IDENTITIES (MALHA_TLS_CERT_FILE). The secret comes from
// the environment or a file, never from the command line (it would sit in the shell history and in ps).
import { readFileSync } from "node:fs";
import { UsageError } from "./exit-codes.js";

export const ADMIN_SECRET_HEADER = "x-malha-vault-admin-secret";

/** Call options carrying MALHA_VAULT_ADMIN_SECRET / MALHA_VAULT_ADMIN_SECRET_FILE, when set. */
export function vaultAdminCall(env: Readonly<Record<string, string | undefined>>): { headers?: Record<string, string> } {
  const value = env.MALHA_VAULT_ADMIN_SECRET?.trim() || undefined;
  const file = env.MALHA_VAULT_ADMIN_SECRET_FILE?.trim() || undefined;
  if (value && file) throw new UsageError("set MALHA_VAULT_ADMIN_SECRET or MALHA_VAULT_ADMIN_SECRET_FILE, not both");
  let secret = value;
  if (file) {
    try {
      secret = readFileSync(file, "utf8").trim();
    } catch (err) {
      throw new UsageError(
        `MALHA_VAULT_ADMIN_SECRET_FILE names a file that cannot be read: ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  return secret ? { headers: { [ADMIN_SECRET_HEADER]: secret } } : {};
}
