import { createHash, timingSafeEqual } from "node:crypto";
import type { PeerIdentity } from "../../libs/rpc/server.js";
import { permissionDenied } from "../../libs/rpc/errors.js";

export const SECRET_HEADER = "x-malha-vault-secret";

/**
 * Who may receive decrypted client credentials. With mTLS the verified client certificate decides;
 * without it a shared secret sent in a header; with neither, nobody (fail closed).
 */
export type CredentialsAuth =
  | { mode: "mtls"; identity: string }
  | { mode: "secret"; secretDigest: Buffer }
  | { mode: "closed" };

export function secretAuth(secret: string): CredentialsAuth {
  return { mode: "secret", secretDigest: digest(secret) };
}

/** Throws PERMISSION_DENIED unless the caller is the ADN gateway. */
export function authorizeCredentialsCaller(auth: CredentialsAuth, peer: PeerIdentity | undefined, headers: Headers): void {
  switch (auth.mode) {
    case "closed":
      throw permissionDenied(
        "GetClientCredentials is disabled: the vault has neither an mTLS client CA (TLS_CLIENT_CA_FILE) nor VAULT_CREDENTIALS_SECRET configured",
      );
    case "mtls": {
      const names = [peer?.subjectCommonName, ...(peer?.subjectAltNames ?? []).filter((n) => n.startsWith("DNS:")).map((n) => n.slice(4))];
      if (names.includes(auth.identity)) return;
      const shown = peer?.subjectCommonName ?? "no client certificate";
      throw permissionDenied(`only the ADN gateway (identity '${auth.identity}') may fetch client credentials; the caller is '${printable(shown)}'`);
    }
    case "secret": {
      const given = headers.get(SECRET_HEADER);
      if (given === null || given === "") {
        throw permissionDenied(`only the ADN gateway may fetch client credentials: the ${SECRET_HEADER} header is missing`);
      }
      // Digests have equal length whatever was sent, so the comparison time says nothing about the secret.
      if (!timingSafeEqual(digest(given), auth.secretDigest)) {
        throw permissionDenied(`only the ADN gateway may fetch client credentials: the ${SECRET_HEADER} header is wrong`);
      }
      return;
    }
  }
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 128);
}
