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
  /** One page of the vault's ACTIVE certificates. */
  listActive: (pageToken: string) => Promise<CertificateListing>;
  refreshMs: number;
  now: () => number;
  log: Logger;
}

const MAX_PAGES = 1000;

export class ActiveCertificates {
  /** Latest expiry of an ACTIVE certificate per municipality, and when it was read. */
  private view: { readAt: number; notAfter: Map<string, number> } | undefined;
  private loading: Promise<void> | undefined;
  /** When the last listing was attempted: a vault that is away is asked again once per period, not per call. */
  private attemptedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: ActiveCertificatesOptions) {}

  /**
   * Whether `ibge` has an ACTIVE certificate that has not expired by now; undefined while the vault has
   * never answered (unknown is not "no": the scheduler then lets the gateway decide).
   */
  async has(ibge: string): Promise<boolean | undefined> {
    await this.fresh();
    if (!this.view) return undefined;
    return (this.view.notAfter.get(ibge) ?? 0) > this.opts.now();
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
