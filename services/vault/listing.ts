import { CertificateStatus } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { invalidArgument } from "../../libs/rpc/errors.js";
import { pageSizeOf } from "../../libs/rpc/page-size.js";
import type { PageTokens } from "../../libs/rpc/page-token.js";
import type { CertificateRow } from "./repository.js";

export const IBGE_PATTERN = /^\d{7}$/;

export interface ListFilter {
  ibge: string;
  status: CertificateStatus;
  expiringBefore?: Date;
  pageSize: number;
  pageToken: string;
}

/** A ListCertificates page as SQL pieces for CertificateRepository.list; every value is a parameter. */
export interface ListQuery {
  where: string;
  params: unknown[];
  orderBy: string;
  limit: number;
  /** Token for the page after `rows` (empty when `rows` is the last page). */
  nextToken(rows: CertificateRow[]): string;
}

/**
 * Builds the query of one page. "Expiring soon" (expiring_before set) is soonest first; otherwise by
 * municipality, newest first. Pages continue after the last row seen (keyset), so rows inserted or
 * changed between calls neither repeat nor shift a page.
 */
export function buildListQuery(filter: ListFilter, now: Date, tokens: PageTokens): ListQuery {
  if (filter.ibge !== "" && !IBGE_PATTERN.test(filter.ibge)) throw invalidArgument("ibge must be 7 digits");
  if (!(filter.status in CertificateStatus)) throw invalidArgument(`unknown status ${filter.status}`);
  const limit = pageSizeOf(filter.pageSize);
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (filter.ibge !== "") {
    conditions.push("ibge = ?");
    params.push(filter.ibge);
  }
  switch (filter.status) {
    case CertificateStatus.ACTIVE:
    case CertificateStatus.INACTIVE:
      conditions.push("status = ? AND not_after > ?");
      params.push(filter.status === CertificateStatus.ACTIVE ? "active" : "inactive", now);
      break;
    case CertificateStatus.DEACTIVATED:
      conditions.push("status = 'deactivated'");
      break;
    case CertificateStatus.EXPIRED:
      conditions.push("status <> 'deactivated' AND not_after <= ?");
      params.push(now);
      break;
    default:
      break;
  }
  if (filter.expiringBefore) {
    conditions.push("not_after < ?");
    params.push(filter.expiringBefore);
  }
  const byExpiry = filter.expiringBefore !== undefined;
  const filters = { ibge: filter.ibge, status: filter.status, expiringBefore: filter.expiringBefore };
  // Keyset: [not_after ms, id] when soonest first, else [ibge, not_after ms, id]; ids are BIGINT, so text.
  if (byExpiry) {
    const after = tokens.decode("ListCertificates", filters, filter.pageToken, ["int", "string"]);
    if (after) {
      const [at, id] = after;
      conditions.push("(not_after > ? OR (not_after = ? AND id > CAST(? AS UNSIGNED)))");
      params.push(new Date(at), new Date(at), id);
    }
  } else {
    const after = tokens.decode("ListCertificates", filters, filter.pageToken, ["string", "int", "string"]);
    if (after) {
      const [ibge, at, id] = after;
      conditions.push("(ibge > ? OR (ibge = ? AND (not_after < ? OR (not_after = ? AND id < CAST(? AS UNSIGNED)))))");
      params.push(ibge, ibge, new Date(at), new Date(at), id);
    }
  }
  return {
    where: conditions.join(" AND "),
    params,
    orderBy: byExpiry ? "not_after ASC, id ASC" : "ibge ASC, not_after DESC, id DESC",
    // One extra row tells whether another page exists.
    limit: limit + 1,
    nextToken(rows) {
      if (rows.length <= limit) return "";
      const last = rows[limit - 1]!;
      const k = byExpiry ? [last.notAfter.getTime(), last.id] : [last.ibge, last.notAfter.getTime(), last.id];
      return tokens.encode("ListCertificates", filters, k);
    },
  };
}

/** The status a client sees: EXPIRED is derived from not_after at read time. */
export function effectiveStatus(row: CertificateRow, now: Date): CertificateStatus {
  if (row.status === "deactivated") return CertificateStatus.DEACTIVATED;
  if (row.notAfter.getTime() <= now.getTime()) return CertificateStatus.EXPIRED;
  return row.status === "active" ? CertificateStatus.ACTIVE : CertificateStatus.INACTIVE;
}
