import { Counter, Gauge, type Registry } from "prom-client";
import { oncePerScrape } from "../../libs/rpc/metrics.js";
import type { CertificateRepository } from "./repository.js";

const DAY_MS = 24 * 3600_000;
/** Upper bounds (days to expiry) of the buckets of malha_vault_certificates; "expired" below 0. */
const WINDOWS: [string, number][] = [
  ["7d", 7],
  ["30d", 30],
  ["90d", 90],
];

/**
 * Certificate gauges, computed from MySQL at scrape time so every replica reports the same numbers:
 *   malha_vault_certificates{status, expires_within}       count per stored status and expiry window
 *   malha_vault_active_certificate_seconds_to_expiry{ibge} per municipality; negative once expired
 *   malha_vault_certificates_expiring_soon                 ACTIVE ones within VAULT_EXPIRING_SOON_DAYS
 */
export function registerCertificateMetrics(
  registry: Registry,
  repo: CertificateRepository,
  expiringSoonDays: number,
  now: () => Date = () => new Date(),
): void {
  const failures = new Counter({
    name: "malha_vault_certificate_metrics_errors_total",
    help: "Scrapes whose certificate gauges could not be refreshed from MySQL (the gauges keep their last values).",
    registers: [registry],
    // Waits for this scrape's query, so the scrape that failed already reports its failure.
    async collect() {
      await rows();
    },
  });
  // A database outage must not fail the whole scrape (the RPC metrics matter most then): the gauges keep
  // their last values and a counter says so.
  const rows = oncePerScrape(
    () => repo.expirySummary(),
    () => failures.inc(),
  );

  new Gauge({
    name: "malha_vault_certificates",
    help: "Stored certificates by status (active, inactive, deactivated) and time left until not_after.",
    labelNames: ["status", "expires_within"],
    registers: [registry],
    async collect() {
      const current = await rows();
      if (!current) return;
      this.reset();
      const t = now().getTime();
      for (const r of current) {
        const days = (r.notAfter.getTime() - t) / DAY_MS;
        const window = days <= 0 ? "expired" : (WINDOWS.find(([, max]) => days <= max)?.[0] ?? "later");
        this.inc({ status: r.status, expires_within: window });
      }
    },
  });
  new Gauge({
    // Seconds, Prometheus' base unit (alerts divide by 86400 to speak days).
    name: "malha_vault_active_certificate_seconds_to_expiry",
    help: "Seconds until the ACTIVE certificate of each municipality expires (negative once expired).",
    labelNames: ["ibge"],
    registers: [registry],
    async collect() {
      const current = await rows();
      if (!current) return;
      this.reset();
      const t = now().getTime();
      for (const r of current) {
        if (r.status === "active") this.set({ ibge: r.ibge }, Math.floor((r.notAfter.getTime() - t) / 1000));
      }
    },
  });
  new Gauge({
    name: "malha_vault_certificates_expiring_soon",
    help: "ACTIVE certificates that expire within VAULT_EXPIRING_SOON_DAYS (or already have).",
    registers: [registry],
    async collect() {
      const current = await rows();
      if (!current) return;
      const limit = now().getTime() + expiringSoonDays * DAY_MS;
      this.set(current.filter((r) => r.status === "active" && r.notAfter.getTime() <= limit).length);
    },
  });
}
