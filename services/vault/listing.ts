import { createHash } from "node:crypto";
import { CertificateStatus } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { invalidArgument } from "../../libs/rpc/errors.js";
import type { CertificateRow } from "./repository.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;
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

interface Token {
  /** Filters the token was issued for. */
  f: string;
  /** Keyset of the last row: [not_after ms, id] or [ibge, not_after ms, id]. */
  k: (string | number)[];
}

/**
 * Builds the query of one page. "Expiring soon" (expiring_before set) is soonest first; otherwise by
 * municipality, newest first. Pages continue after the last row seen (keyset), so rows inserted or
 * changed between calls neither repeat nor shift a page.
 */
export function buildListQuery(filter: ListFilter, now: Date): ListQuery {
  if (filter.ibge !== "" && !IBGE_PATTERN.test(filter.ibge)) throw invalidArgument("ibge must be 7 digits");
  if (filter.pageSize < 0) throw invalidArgument("page_size must not be negative");
  if (!(filter.status in CertificateStatus)) throw invalidArgument(`unknown status ${filter.status}`);
  const limit = filter.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(filter.pageSize, MAX_PAGE_SIZE);
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
  const filterKey = createHash("sha256")
    .update(JSON.stringify([filter.ibge, filter.status, filter.expiringBefore?.getTime() ?? null]))
    .digest("hex")
    .slice(0, 16);

  if (filter.pageToken !== "") {
    const token = decodeToken(filter.pageToken, filterKey);
    if (byExpiry) {
      const [after, id] = token.k as [number, string];
      conditions.push("(not_after > ? OR (not_after = ? AND id > CAST(? AS UNSIGNED)))");
      params.push(new Date(after), new Date(after), id);
    } else {
      const [ibge, after, id] = token.k as [string, number, string];
      conditions.push("(ibge > ? OR (ibge = ? AND (not_after < ? OR (not_after = ? AND id < CAST(? AS UNSIGNED)))))");
      params.push(ibge, ibge, new Date(after), new Date(after), id);
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
      return Buffer.from(JSON.stringify({ f: filterKey, k } satisfies Token)).toString("base64url");
    },
  };
}

function decodeToken(text: string, filterKey: string): Token {
  let token: Token;
  try {
    token = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Token;
  } catch {
    throw invalidArgument("page_token is malformed");
  }
  const shapeOk =
    token !== null &&
    typeof token === "object" &&
    typeof token.f === "string" &&
    Array.isArray(token.k) &&
    (token.k.length === 2 || token.k.length === 3) &&
    /^\d{1,20}$/.test(String(token.k.at(-1))) &&
    Number.isFinite(Number(token.k.at(-2)));
  if (!shapeOk) throw invalidArgument("page_token is malformed");
  if (token.f !== filterKey) throw invalidArgument("page_token was issued for other filters; repeat the same filters or start over");
  if (token.k.length === 3 && !IBGE_PATTERN.test(String(token.k[0]))) throw invalidArgument("page_token is malformed");
  return token;
}

/** The status a client sees: EXPIRED is derived from not_after at read time. */
export function effectiveStatus(row: CertificateRow, now: Date): CertificateStatus {
  if (row.status === "deactivated") return CertificateStatus.DEACTIVATED;
  if (row.notAfter.getTime() <= now.getTime()) return CertificateStatus.EXPIRED;
  return row.status === "active" ? CertificateStatus.ACTIVE : CertificateStatus.INACTIVE;
}
