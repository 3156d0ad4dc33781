// The README's first command, for real: the local stack, the ADN simulator, the services, the demo
// municipalities registered with certificates in the vault, synced through the whole mesh.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("quickstart", () => {
  it("`npm start` brings the mesh up and syncs the demo municipalities", async () => {
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile("npm", ["start", "--", "--exit-when-synced"], { cwd: ROOT, timeout: 280_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
    expect(code, out.slice(-3000)).toBe(0);
    expect(out).toMatch(/vault\s+SERVING/);
    expect(out).toMatch(/billing\s+SERVING/);
    expect(out).toMatch(/console\s+SERVING/);
    // On a fresh machine each sync starts; on a re-run the one-hour rule skips feeds already caught up.
    for (const ibge of ["3550308", "3304557", "4106902"]) expect(out).toMatch(new RegExp(`demo: ${ibge} sync (started|skipped)`));
    expect(out).toContain("demo: every demo municipality is synced");
    // Billing through the dev stack's tenant token: three boletos with PDFs and a zip.
    expect(out).toMatch(/demo: boleto job \S+ for tenant demo completed: 3 PDFs, zip \d+ bytes/);
  }, 300_000);
});
