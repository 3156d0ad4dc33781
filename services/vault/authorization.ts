// Who may call which vault method, and how callers prove who they are: the vault's access table and
// resolvers for the one authentication interceptor (docs/decisions/0022-authentication-interceptor.md).
import type { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { type AccessTable, adminCaller, meshPeerCaller } from "../../libs/rpc/auth/access.js";
import type { CallerAuth, CallerResolver } from "../../libs/rpc/auth/authorize.js";
import { certificateAdminResolver, certificatePeerResolver, secretDigest, sharedSecretResolver } from "../../libs/rpc/auth/resolvers.js";

export const SECRET_HEADER = "x-malha-vault-secret";
export const ADMIN_SECRET_HEADER = "x-malha-vault-admin-secret";

/**
 * Who may receive decrypted client credentials. With mTLS the verified client certificate decides;
 * without it a shared secret sent in a header; with neither, nobody (fail closed).
 */
export type CredentialsAuth = { mode: "mtls"; identity: string } | { mode: "secret"; secretDigest: Buffer } | { mode: "closed" };

export function secretAuth(secret: string): CredentialsAuth {
  return { mode: "secret", secretDigest: secretDigest(secret) };
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
  return { identities, ...(secret !== undefined ? { secretDigest: secretDigest(secret) } : {}) };
}

/** The ADN gateway as a mesh peer: its certificate identity under mTLS, else the holder of the credentials secret. */
const gatewayName = (credentials: CredentialsAuth) => (credentials.mode === "mtls" ? credentials.identity : "adn-gateway");

/** Administrators change; reading metadata is open to the mesh (the coordinator lists who has a certificate); credentials go to the gateway alone. */
export function vaultAccess(credentials: CredentialsAuth): AccessTable<typeof VaultService> {
  return {
    importCertificate: [adminCaller],
    listCertificates: "public",
    getCertificate: "public",
    deactivateCertificate: [adminCaller],
    activateCertificate: [adminCaller],
    rotateMasterKey: [adminCaller],
    getClientCredentials: [meshPeerCaller(gatewayName(credentials))],
  };
}

/**
 * The vault's resolvers. A wrong admin secret is refused even from an admin certificate: whoever sent
 * it has a problem to fix.
 */
export function vaultCallers(credentials: CredentialsAuth, admin: AdminAuth): CallerAuth {
  const resolvers: CallerResolver[] = [];
  if (admin.secretDigest)
    resolvers.push(
      sharedSecretResolver({
        kind: "admin",
        name: "administrator",
        header: ADMIN_SECRET_HEADER,
        setting: "VAULT_ADMIN_SECRET",
        digest: admin.secretDigest,
      }),
    );
  if (admin.identities.length > 0) resolvers.push(certificateAdminResolver(admin.identities));
  if (credentials.mode === "secret")
    resolvers.push(
      sharedSecretResolver({
        kind: "meshPeer",
        name: gatewayName(credentials),
        header: SECRET_HEADER,
        setting: "VAULT_CREDENTIALS_SECRET",
        digest: credentials.secretDigest,
      }),
    );
  if (credentials.mode === "mtls") resolvers.push(certificatePeerResolver([credentials.identity]));
  return {
    resolvers,
    unconfigured: {
      admin:
        "the vault has neither VAULT_ADMIN_SECRET nor VAULT_ADMIN_IDENTITIES configured, so nobody may change its certificates or keys",
      meshPeer: "the vault has neither an mTLS client CA (TLS_CLIENT_CA_FILE) nor VAULT_CREDENTIALS_SECRET configured",
    },
  };
}
