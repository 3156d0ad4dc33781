import type { Logger } from "../../libs/log/logger.js";
import type { AdminAuth, CredentialsAuth } from "./authorization.js";
import type { Keyring } from "./crypto.js";
import type { CertificateRepository } from "./repository.js";
import { findUndecryptable, verifyMasterKeys } from "./rotation.js";

const LISTED = 100;

export interface StartReportDeps {
  repo: CertificateRepository;
  keyring: Keyring;
  log: Logger;
  credentialsAuth: CredentialsAuth;
  adminAuth: AdminAuth;
  expiringSoonDays: number;
}

/**
 * Before SERVING: refuses master keys that contradict the database, then says what an operator must know
 * (rows no configured key decrypts, certificates about to expire, credentials disabled). Only ids, key ids
 * and reasons are logged.
 */
export async function reportAtStart({ repo, keyring, log, credentialsAuth, adminAuth, expiringSoonDays }: StartReportDeps): Promise<void> {
  await verifyMasterKeys(repo, keyring);
  const bad = await findUndecryptable(repo, keyring);
  if (bad.length > 0) {
    log.warn(
      { count: bad.length, certificates: bad.slice(0, LISTED), configuredKeyIds: keyring.keyIds() },
      "certificates that the configured master keys cannot decrypt",
    );
  }
  const now = Date.now();
  const soon = (await repo.expirySummary()).filter(
    (r) => r.status === "active" && r.notAfter.getTime() <= now + expiringSoonDays * 24 * 3600_000,
  );
  if (soon.length > 0) {
    log.warn(
      {
        count: soon.length,
        certificates: soon.slice(0, LISTED).map((r) => ({ id: r.id, ibge: r.ibge, notAfter: r.notAfter.toISOString() })),
      },
      `ACTIVE certificates expiring within ${expiringSoonDays} days`,
    );
  }
  log.info(
    {
      activeKeyId: keyring.activeKeyId,
      keyIds: keyring.keyIds(),
      credentialsAuth: credentialsAuth.mode,
      adminAuth: adminAuthMode(adminAuth),
    },
    "vault keys verified",
  );
  if (credentialsAuth.mode === "closed") {
    log.warn(
      "GetClientCredentials will refuse every caller: set TLS_CLIENT_CA_FILE (mTLS, identity VAULT_ADN_GATEWAY_IDENTITY) or VAULT_CREDENTIALS_SECRET",
    );
  }
  if (adminAuthMode(adminAuth) === "closed") {
    log.warn(
      "ImportCertificate, ActivateCertificate, DeactivateCertificate and RotateMasterKey will refuse every caller: set VAULT_ADMIN_SECRET or VAULT_ADMIN_IDENTITIES",
    );
  }
}

/** For the start-up log: how administrators are recognised, never the secret. */
function adminAuthMode(auth: AdminAuth): string {
  const modes = [...(auth.secretDigest ? ["secret"] : []), ...(auth.identities.length > 0 ? [`mtls:${auth.identities.join(",")}`] : [])];
  return modes.length > 0 ? modes.join("+") : "closed";
}
