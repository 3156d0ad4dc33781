// "Certificados": a municipality's certificates as the vault lists them (metadata only), and importing a
// PFX through the vault's ImportCertificate with the console's vault administrator secret. The password
// goes straight into the one call and is never logged or kept.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { CertificateStatus, type Certificate, type VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import type { CertificateStatusName, CertificatesResponse, CertificateView, ImportCertificateResult } from "./api-types.js";
import { badRequest, HttpError } from "./http-kit.js";
import { iso, opt } from "./proto-view.js";
import type { Logger } from "../../libs/log/logger.js";

/** The vault refuses larger PFX files (services/vault/pfx.ts); refusing them here spares the upload. */
export const MAX_PFX_BYTES = 64 * 1024;
const ADMIN_SECRET_HEADER = "x-malha-vault-admin-secret";
const MAX_PAGES = 20;

export interface CertificatesView {
  list(ibge: string): Promise<CertificatesResponse>;
  import(actor: string, ibge: string, pfx: Buffer, password: string): Promise<ImportCertificateResult>;
}

const STATUS: Record<CertificateStatus, CertificateStatusName> = {
  [CertificateStatus.UNSPECIFIED]: "unknown",
  [CertificateStatus.ACTIVE]: "active",
  [CertificateStatus.INACTIVE]: "inactive",
  [CertificateStatus.DEACTIVATED]: "deactivated",
  [CertificateStatus.EXPIRED]: "expired",
};

export function toCertificateView(c: Certificate): CertificateView {
  return {
    id: c.id,
    ibge: c.ibge,
    cnpj: c.cnpj,
    subject: c.subject,
    issuer: c.issuer,
    serialNumber: c.serialNumber,
    ...opt("notBefore", iso(c.notBefore)),
    ...opt("notAfter", iso(c.notAfter)),
    status: STATUS[c.status] ?? "unknown",
    fingerprint: c.fingerprintSha256,
    ...opt("createdAt", iso(c.createdAt)),
    ...opt("deactivationReason", c.deactivationReason),
  };
}

/** Active first, then the rest by newest expiry: the order an operator reads a municipality's history in. */
const ORDER: Record<CertificateStatusName, number> = { active: 0, inactive: 1, deactivated: 2, expired: 3, unknown: 4 };
export const sortCertificates = (list: CertificateView[]): CertificateView[] =>
  [...list].sort((a, b) => ORDER[a.status] - ORDER[b.status] || (b.notAfter ?? "").localeCompare(a.notAfter ?? ""));

/**
 * The vault answers UNAUTHENTICATED when the administrator secret is wrong (a rotated VAULT_ADMIN_SECRET the
 * console's file did not follow): the operator did nothing wrong and retrying will not help, so the answer
 * says it is the console's configuration, not a failure of the vault (502).
 */
function misconfigured(err: unknown, log: Logger | undefined): unknown {
  const e = ConnectError.from(err);
  if (e.code !== Code.Unauthenticated) return err;
  log?.error({ vaultSaid: e.rawMessage }, "the vault refused the console's administrator secret; fix CONSOLE_VAULT_ADMIN_SECRET(_FILE)");
  return new HttpError(
    500,
    "CONSOLE_MISCONFIGURED",
    "the console's configuration is wrong: the vault refused its administrator secret (CONSOLE_VAULT_ADMIN_SECRET_FILE); " +
      "ask whoever runs the console to set the vault's current secret",
  );
}

export function createCertificatesView(
  vault: Client<typeof VaultService>,
  adminSecret: string | undefined,
  log?: Logger,
): CertificatesView {
  return {
    async list(ibge) {
      const all: CertificateView[] = [];
      let pageToken = "";
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await vault.listCertificates({ ibge, pageSize: 500, pageToken });
        all.push(...page.certificates.map(toCertificateView));
        pageToken = page.nextPageToken;
        if (!pageToken) break;
      }
      return { certificates: sortCertificates(all) };
    },
    async import(actor, ibge, pfx, password) {
      if (!adminSecret) {
        throw new HttpError(
          503,
          "FAILED_PRECONDITION",
          "the console has no vault administrator secret (CONSOLE_VAULT_ADMIN_SECRET_FILE), so it cannot import certificates",
        );
      }
      if (pfx.length === 0) throw badRequest("pfx is empty");
      if (pfx.length > MAX_PFX_BYTES) throw badRequest(`pfx is ${pfx.length} bytes; the limit is ${MAX_PFX_BYTES}`);
      const res = await vault
        .importCertificate({ ibge, pfx, password, requestedBy: actor }, { headers: { [ADMIN_SECRET_HEADER]: adminSecret } })
        .catch((err: unknown) => {
          throw misconfigured(err, log);
        });
      return {
        certificate: toCertificateView(res.certificate!),
        created: res.created,
        activated: res.activated,
        ...opt("replacedCertificateId", res.replacedCertificateId),
      };
    },
  };
}
