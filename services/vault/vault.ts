import { createHash } from "node:crypto";
import type { Logger } from "../../libs/log/logger.js";
import { currentScope } from "../../libs/rpc/context.js";
import type { PageTokens } from "../../libs/rpc/page-token.js";
import { failedPrecondition, invalidArgument, notFound } from "../../libs/rpc/errors.js";
import { ALGORITHM, type Keyring } from "./crypto.js";
import { buildListQuery, IBGE_PATTERN, type ListFilter } from "./listing.js";
import { openPfx } from "./pfx.js";
import type { CertificateRepository, CertificateRow, ImportOutcome } from "./repository.js";
import { decryptError, openSome, sealAll } from "./secrets.js";
import { credentialsRefused } from "./errors.js";

export interface ImportRequest {
  ibge: string;
  pfx: Uint8Array;
  password: string;
  requestedBy: string;
}

export interface ClientCredentials {
  unchanged: boolean;
  version: string;
  row: CertificateRow;
  privateKeyPem: string;
  chainPem: string;
}

const MAX_REQUESTED_BY = 128;

/** Certificate lifecycle over the repository and the keyring; the gRPC handlers only translate. */
export class Vault {
  constructor(
    private readonly repo: CertificateRepository,
    private readonly keyring: Keyring,
    private readonly log: Logger,
    private readonly pageTokens: PageTokens,
    readonly now: () => Date = () => new Date(),
  ) {}

  /** The request's logger (request id, rpc) inside a call; the service's outside. */
  private logger(): Logger {
    return currentScope()?.log ?? this.log;
  }

  async importCertificate(req: ImportRequest): Promise<ImportOutcome> {
    requireIbge(req.ibge);
    const requestedBy = auditName(req.requestedBy);
    const opened = openPfx(req.pfx, req.password, this.now());
    const identity = { fingerprint: opened.fingerprint, ibge: req.ibge };
    const secrets = sealAll(this.keyring, identity, {
      pfx: Buffer.from(req.pfx),
      password: Buffer.from(req.password, "utf8"),
      privateKey: Buffer.from(opened.privateKeyPem, "utf8"),
      chain: Buffer.from(opened.chainPem, "utf8"),
    });
    const outcome = await this.repo.importCertificate({
      ...identity,
      subject: opened.subject.slice(0, 1024),
      issuer: opened.issuer.slice(0, 1024),
      serialNumber: opened.serialNumber.slice(0, 128),
      cnpj: opened.cnpj,
      notBefore: opened.notBefore,
      notAfter: opened.notAfter,
      chainLength: opened.chainLength,
      keyId: this.keyring.activeKeyId,
      algorithm: ALGORITHM,
      secrets,
      requestedBy,
    });
    this.logger().info(
      {
        certificateId: outcome.row.id,
        ibge: outcome.row.ibge,
        fingerprint: outcome.row.fingerprint,
        cnpjSource: opened.cnpjSource,
        created: outcome.created,
        activated: outcome.activated,
        replacedCertificateId: outcome.replacedId,
        requestedBy,
      },
      outcome.created ? "certificate imported" : "certificate already stored",
    );
    return outcome;
  }

  async get(id: string): Promise<CertificateRow> {
    const row = /^\d{1,20}$/.test(id) ? await this.repo.findById(id) : undefined;
    if (!row) throw notFound(`certificate ${JSON.stringify(id.slice(0, 64))} not found`);
    return row;
  }

  async list(filter: ListFilter): Promise<{ rows: CertificateRow[]; nextToken: string }> {
    const query = buildListQuery(filter, this.now(), this.pageTokens);
    const rows = await this.repo.list(query.where, query.params, query.orderBy, query.limit);
    return { rows: rows.slice(0, query.limit - 1), nextToken: query.nextToken(rows) };
  }

  async deactivate(id: string, reason: string, requestedBy: string): Promise<CertificateRow> {
    const why = reason.trim();
    if (why === "") throw invalidArgument("reason is required");
    if (why.length > 1000) throw invalidArgument("reason is longer than 1000 characters");
    await this.get(id);
    const row = await this.repo.deactivate(id, why, auditName(requestedBy));
    if (!row) throw notFound(`certificate ${id} not found`);
    this.logger().info({ certificateId: id, ibge: row.ibge, requestedBy: auditName(requestedBy) }, "certificate deactivated");
    return row;
  }

  async activate(id: string, requestedBy: string): Promise<{ row: CertificateRow; replacedId?: string }> {
    await this.get(id);
    const now = this.now();
    const result = await this.repo.activate(id, auditName(requestedBy), (row) => {
      if (row.notAfter.getTime() <= now.getTime()) {
        throw failedPrecondition(`certificate ${id} expired at ${row.notAfter.toISOString()}`);
      }
      if (row.notBefore.getTime() > now.getTime()) {
        throw failedPrecondition(`certificate ${id} is not valid before ${row.notBefore.toISOString()}`);
      }
    });
    if (!result) throw notFound(`certificate ${id} not found`);
    this.logger().info({ certificateId: id, ibge: result.row.ibge, replacedCertificateId: result.replacedId }, "certificate activated");
    return result;
  }

  /** The ACTIVE credential of a municipality, for the ADN gateway (the caller is authorised already). */
  async clientCredentials(ibge: string, knownVersion: string): Promise<ClientCredentials> {
    requireIbge(ibge);
    const found = await this.repo.findActiveWithSecrets(ibge);
    if (!found) throw credentialsRefused("NO_ACTIVE_CERTIFICATE", `municipality ${ibge} has no ACTIVE certificate`, { ibge });
    const { row, secrets } = found;
    if (row.notAfter.getTime() <= this.now().getTime()) {
      throw credentialsRefused(
        "CERTIFICATE_EXPIRED",
        `the ACTIVE certificate ${row.id} of municipality ${ibge} expired at ${row.notAfter.toISOString()} (status EXPIRED); import a new one`,
        { ibge, certificateId: row.id },
      );
    }
    const version = credentialVersion(row);
    if (knownVersion !== "" && knownVersion === version) {
      return { unchanged: true, version, row, privateKeyPem: "", chainPem: "" };
    }
    // The row was found by `active_ibge`, which an SQL edit can re-point at another municipality
    // without the master key. Every ciphertext is bound (AES-GCM associated data, since the first
    // release: no row lacks it, so nothing needs migrating) to the municipality it was imported for, so
    // it is opened for the municipality asked for: municipality B's row served for C fails
    // authentication (DATA_LOSS, CIPHERTEXT_TAMPERED), and so does B's row whose `ibge` column was
    // rewritten to C.
    if (row.ibge !== ibge) {
      throw credentialsRefused(
        "CIPHERTEXT_TAMPERED",
        `certificate ${row.id} was imported for municipality ${row.ibge} but is marked ACTIVE for ${ibge} (the row was edited); re-import the certificate for ${ibge}`,
        { ibge, certificateId: row.id },
      );
    }
    let plain;
    try {
      plain = openSome(this.keyring, { ...row, ibge }, secrets, ["privateKey", "chain"]);
    } catch (err) {
      throw decryptError(err, row);
    }
    this.logger().info({ certificateId: row.id, ibge, version }, "client credentials handed out");
    return { unchanged: false, version, row, privateKeyPem: plain.privateKey.toString("utf8"), chainPem: plain.chain.toString("utf8") };
  }
}

/** Changes with every activation (a new certificate, or the same one re-activated); not with key rotation. */
export function credentialVersion(row: CertificateRow): string {
  return createHash("sha256")
    .update(`${row.id}\n${row.fingerprint}\n${row.activatedAt?.getTime() ?? 0}`)
    .digest("hex")
    .slice(0, 32);
}

function requireIbge(ibge: string): void {
  if (!IBGE_PATTERN.test(ibge)) throw invalidArgument("ibge must be 7 digits");
}

function auditName(name: string): string {
  return name
    .replace(/[^\x20-\x7e\u00a0-\u024f]/g, "")
    .trim()
    .slice(0, MAX_REQUESTED_BY);
}
