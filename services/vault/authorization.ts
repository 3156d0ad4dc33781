import { createHash, timingSafeEqual } from "node:crypto";
import type { PeerIdentity } from "../../libs/rpc/server.js";
import { permissionDenied } from "../../libs/rpc/errors.js";

export const SECRET_HEADER = "x-malha-vault-secret";
export const ADMIN_SECRET_HEADER = "x-malha-vault-admin-secret";

/**
 * Who may receive decrypted client credentials. With mTLS the verified client certificate decides;
 * without it a shared secret sent in a header; with neither, nobody (fail closed).
 */
export type CredentialsAuth = { mode: "mtls"; identity: string } | { mode: "secret"; secretDigest: Buffer } | { mode: "closed" };

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
      if (peerNames(peer).includes(auth.identity)) return;
      const shown = peer?.subjectCommonName ?? "no client certificate";
      throw permissionDenied(
        `only the ADN gateway (identity '${auth.identity}') may fetch client credentials; the caller is '${printable(shown)}'`,
      );
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

/**
 * Who may change what the vault holds (import, activate, deactivate, master-key rotation): a caller with
 * the admin secret, or under mTLS one whose client certificate names an admin identity. Neither
 * configured: nobody (fail closed). Never the ADN gateway, which faces the internet (config refuses it).
 */
export interface AdminAuth {
  identities: readonly string[];
  secretDigest?: Buffer;
}

export function adminAuth(identities: readonly string[], secret: string | undefined): AdminAuth {
  return { identities, ...(secret !== undefined ? { secretDigest: digest(secret) } : {}) };
}

/** Throws PERMISSION_DENIED unless the caller is an administrator; `call` names the RPC in the message. */
export function authorizeAdminCaller(auth: AdminAuth, call: string, peer: PeerIdentity | undefined, headers: Headers): void {
  if (auth.identities.length === 0 && !auth.secretDigest) {
    throw permissionDenied(
      `${call} is disabled: the vault has neither VAULT_ADMIN_SECRET nor VAULT_ADMIN_IDENTITIES configured, so nobody may change its certificates or keys`,
    );
  }
  const given = headers.get(ADMIN_SECRET_HEADER);
  if (auth.secretDigest && given !== null && given !== "") {
    if (timingSafeEqual(digest(given), auth.secretDigest)) return;
    throw permissionDenied(`${call} is an administrative call: the ${ADMIN_SECRET_HEADER} header is wrong`);
  }
  if (auth.identities.length > 0 && peerNames(peer).some((n) => auth.identities.includes(n))) return;
  const ways = [
    ...(auth.secretDigest ? [`the ${ADMIN_SECRET_HEADER} header (VAULT_ADMIN_SECRET)`] : []),
    ...(auth.identities.length > 0 ? [`a client certificate named ${auth.identities.map((i) => `'${i}'`).join(" or ")}`] : []),
  ];
  const shown = peer?.subjectCommonName ?? "no client certificate";
  throw permissionDenied(`${call} is an administrative call and needs ${ways.join(" or ")}; the caller is '${printable(shown)}'`);
}

function peerNames(peer: PeerIdentity | undefined): string[] {
  const names = (peer?.subjectAltNames ?? []).filter((n) => n.startsWith("DNS:")).map((n) => n.slice(4));
  return peer?.subjectCommonName ? [peer.subjectCommonName, ...names] : names;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 128);
}
