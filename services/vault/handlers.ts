import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { CertificateSchema, type Certificate, type VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import type { Keyring } from "./crypto.js";
import { ImportRefusal } from "./import-refusal.js";
import { effectiveStatus } from "./listing.js";
import type { CertificateRepository, CertificateRow } from "./repository.js";
import { rotateMasterKey } from "./rotation.js";
import type { Vault } from "./vault.js";

export interface HandlerDeps {
  vault: Vault;
  repo: CertificateRepository;
  keyring: Keyring;
}

/**
 * The VaultService methods: request validation and proto mapping around Vault. Who may call each one is
 * decided before they run, by the access table in authorization.ts.
 */
export function createVaultHandlers({ vault, repo, keyring }: HandlerDeps): Partial<ServiceImpl<typeof VaultService>> {
  const toProto = (row: CertificateRow) => toCertificate(row, vault.now());
  return {
    async importCertificate(req) {
      try {
        const outcome = await vault.importCertificate({
          ibge: req.ibge,
          pfx: req.pfx,
          password: req.password,
          requestedBy: req.requestedBy,
        });
        return {
          certificate: toProto(outcome.row),
          created: outcome.created,
          activated: outcome.activated,
          replacedCertificateId: outcome.replacedId ?? "",
        };
      } catch (err) {
        throw err instanceof ImportRefusal ? err.toConnectError() : err;
      }
    },

    async listCertificates(req) {
      const page = await vault.list({
        ibge: req.ibge,
        status: req.status,
        ...(req.expiringBefore ? { expiringBefore: timestampDate(req.expiringBefore) } : {}),
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { certificates: page.rows.map(toProto), nextPageToken: page.nextToken };
    },

    async getCertificate(req) {
      return { certificate: toProto(await vault.get(req.id)) };
    },

    async deactivateCertificate(req) {
      return { certificate: toProto(await vault.deactivate(req.id, req.reason, req.requestedBy)) };
    },

    async activateCertificate(req) {
      const result = await vault.activate(req.id, req.requestedBy);
      return { certificate: toProto(result.row), replacedCertificateId: result.replacedId ?? "" };
    },

    async rotateMasterKey(req) {
      const result = await rotateMasterKey(repo, keyring, req.targetKeyId, req.maxRows);
      return {
        targetKeyId: result.targetKeyId,
        rowsReencrypted: BigInt(result.rowsReencrypted),
        rowsRemaining: BigInt(result.rowsRemaining),
        done: result.done,
        undecryptableCertificateIds: result.undecryptable,
      };
    },

    async getClientCredentials(req) {
      const creds = await vault.clientCredentials(req.ibge, req.knownVersion);
      if (creds.unchanged) return { unchanged: true, version: creds.version };
      return {
        unchanged: false,
        version: creds.version,
        certificateId: creds.row.id,
        privateKeyPem: creds.privateKeyPem,
        certificateChainPem: creds.chainPem,
        fingerprintSha256: creds.row.fingerprint,
        notAfter: timestampFromDate(creds.row.notAfter),
        cnpj: creds.row.cnpj,
      };
    },
  };
}

export function toCertificate(row: CertificateRow, now: Date): Certificate {
  return create(CertificateSchema, {
    id: row.id,
    ibge: row.ibge,
    subject: row.subject,
    issuer: row.issuer,
    serialNumber: row.serialNumber,
    cnpj: row.cnpj,
    notBefore: timestampFromDate(row.notBefore),
    notAfter: timestampFromDate(row.notAfter),
    fingerprintSha256: row.fingerprint,
    status: effectiveStatus(row, now),
    keyId: row.keyId,
    chainLength: row.chainLength,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    ...(row.activatedAt ? { activatedAt: timestampFromDate(row.activatedAt) } : {}),
    ...(row.deactivatedAt ? { deactivatedAt: timestampFromDate(row.deactivatedAt) } : {}),
    deactivationReason: row.deactivationReason ?? "",
  });
}
