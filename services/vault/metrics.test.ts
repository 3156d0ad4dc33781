import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../libs/config/paths.js";
import { migrate } from "../../libs/db/migrate.js";
import { createMysqlPool } from "../../libs/db/pool.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { registerCertificateMetrics } from "./metrics.js";
import { CertificateRepository, type StoredStatus } from "./repository.js";

const DAY = 24 * 3600_000;
const now = new Date("2026-06-01T00:00:00Z");
const unreachable = createMysqlPool("mysql://malha:malha@127.0.0.1:1/malha", { connectionLimit: 1, connectTimeoutMs: 2000 });
let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, join(projectRoot(), "migrations"));
});
afterAll(async () => {
  await unreachable.end().catch(() => undefined);
  await db?.drop();
});

/** Metadata rows as the vault stores them; the secret columns hold placeholder bytes (never read here). */
async function insert(rows: { ibge: string; status: StoredStatus; days: number }[]): Promise<void> {
  for (const [i, r] of rows.entries()) {
    const blob = Buffer.alloc(16, i);
    await db.pool.query(
      `INSERT INTO certificates (ibge, fingerprint_sha256, subject, issuer, serial_number, cnpj, not_before, not_after,
         status, active_ibge, key_id, algorithm, pfx_ciphertext, pfx_nonce, pfx_auth_tag, password_ciphertext,
         password_nonce, password_auth_tag, private_key_ciphertext, private_key_nonce, private_key_auth_tag)
       VALUES (?, ?, 'CN=x', 'CN=y', '01', '11222333000181', ?, ?, ?, ?, 'k', 'aes-256-gcm', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.ibge,
        String(i).repeat(64),
        new Date(now.getTime() - 400 * DAY),
        new Date(now.getTime() + r.days * DAY),
        r.status,
        r.status === "active" ? r.ibge : null,
        ...Array<Buffer>(9).fill(blob),
      ],
    );
  }
}

describe("certificate metrics", () => {
  it("counts certificates by status and expiry window, days per active municipality, and the expiring-soon ones", async () => {
    const registry = new Registry();
    await insert([
      { ibge: "3550308", status: "active", days: 12.5 },
      { ibge: "3550308", status: "inactive", days: 200 },
      { ibge: "3304557", status: "active", days: -2 },
      { ibge: "4106902", status: "active", days: 5 },
    ]);
    registerCertificateMetrics(registry, new CertificateRepository(db.pool), 30, () => now);
    const text = await registry.metrics();
    expect(text).toContain('malha_vault_certificates{status="active",expires_within="30d"} 1');
    expect(text).toContain('malha_vault_certificates{status="active",expires_within="expired"} 1');
    expect(text).toContain('malha_vault_certificates{status="active",expires_within="7d"} 1');
    expect(text).toContain('malha_vault_certificates{status="inactive",expires_within="later"} 1');
    expect(text).toContain(`malha_vault_active_certificate_seconds_to_expiry{ibge="3550308"} ${12.5 * 86_400}`);
    expect(text).toContain(`malha_vault_active_certificate_seconds_to_expiry{ibge="3304557"} ${-2 * 86_400}`);
    expect(text).toMatch(/^malha_vault_certificates_expiring_soon 3$/m);
  });

  it("keeps the scrape alive when MySQL is down and counts the failure", async () => {
    const registry = new Registry();
    registerCertificateMetrics(registry, new CertificateRepository(unreachable), 30, () => now);
    const text = await registry.metrics();
    expect(text).toMatch(/^malha_vault_certificate_metrics_errors_total 1$/m);
  });
});
