// Which municipalities hold an ACTIVE, unexpired certificate, as the vault lists them. One listing of
// every ACTIVE certificate (paged) serves all feeds, so neither a status page nor a sweep asks the vault
// once per municipality; it is refreshed when older than the refresh period, and a vault that is away
// leaves the last view in place (a feed shows its certificate from a minute ago rather than none).
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Logger } from "../../libs/log/logger.js";

export interface CertificateListing {
  certificates: { ibge: string; notAfter?: Parameters<typeof timestampDate>[0] }[];
  nextPageToken: string;
}

export interface ActiveCertificatesOptions {
  /** One page of the vault's ACTIVE certificates (of one municipality when `ibge` is given). */
  listActive: (pageToken: string, ibge?: string) => Promise<CertificateListing>;
  refreshMs: number;
  now: () => number;
  log: Logger;
}

const MAX_PAGES = 1000;
/**
 * A "no" is confirmed with the vault for that municipality, at most this often: a certificate imported
 * after the last listing counts at once (an operator imports, then asks for SyncNow), without a status
 * page of certificate-less feeds asking the vault on every row.
 */
const ABSENT_CONFIRMED_FOR_MS = 5_000;

export class ActiveCertificates {
  /** Latest expiry of an ACTIVE certificate per municipality, and when it was read. */
  private view: { readAt: number; notAfter: Map<string, number> } | undefined;
  private loading: Promise<void> | undefined;
  /** When the last listing was attempted: a vault that is away is asked again once per period, not per call. */
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private readonly absentConfirmedAt = new Map<string, number>();

  constructor(private readonly opts: ActiveCertificatesOptions) {}

  /**
   * Whether `ibge` has an ACTIVE certificate that has not expired by now; undefined while the vault has
   * never answered (unknown is not "no": the scheduler then lets the gateway decide).
   */
  async has(ibge: string): Promise<boolean | undefined> {
    await this.fresh();
    const view = this.view;
    if (!view) return undefined;
    const now = this.opts.now();
    if ((view.notAfter.get(ibge) ?? 0) > now) return true;
    const confirmed = this.absentConfirmedAt.get(ibge);
    if (confirmed !== undefined && now - confirmed < Math.min(ABSENT_CONFIRMED_FOR_MS, this.opts.refreshMs)) return false;
    try {
      const res = await this.opts.listActive("", ibge);
      const until = Math.max(
        0,
        ...res.certificates.filter((c) => c.ibge === ibge).map((c) => (c.notAfter ? timestampDate(c.notAfter).getTime() : 0)),
      );
      if (until > now) {
        view.notAfter.set(ibge, until);
        this.absentConfirmedAt.delete(ibge);
        return true;
      }
      this.absentConfirmedAt.set(ibge, now);
    } catch (err) {
      this.opts.log.warn({ err, ibge }, "could not confirm with the vault that a municipality has no ACTIVE certificate");
      this.absentConfirmedAt.set(ibge, now);
    }
    return false;
  }

  private async fresh(): Promise<void> {
    const now = this.opts.now();
    if (this.view && now - this.view.readAt < this.opts.refreshMs) return;
    if (!this.loading && now - this.attemptedAt < this.opts.refreshMs) return;
    if (!this.loading) this.attemptedAt = now;
    // Concurrent callers share one listing.
    this.loading ??= this.load()
      .catch((err: unknown) => this.opts.log.warn({ err }, "could not list the vault's ACTIVE certificates; keeping the last view"))
      .finally(() => (this.loading = undefined));
    await this.loading;
  }

  private async load(): Promise<void> {
    const readAt = this.opts.now();
    const notAfter = new Map<string, number>();
    let token = "";
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.opts.listActive(token);
      for (const c of res.certificates) {
        const until = c.notAfter ? timestampDate(c.notAfter).getTime() : 0;
        notAfter.set(c.ibge, Math.max(notAfter.get(c.ibge) ?? 0, until));
      }
      token = res.nextPageToken;
      if (!token) break;
    }
    this.view = { readAt, notAfter };
  }
}
