// The render pool as production runs it: compiled to JavaScript, spawning render-worker.js (no tsx).
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareItem } from "./item.js";
import { boletoValido } from "../testing/fixtures.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
// Inside the repository so that compiled files resolve node_modules the way dist/ does.
const OUT = join(ROOT, "services", "billing", `.tmp-dist-${process.pid}`);

beforeAll(async () => {
  await new Promise<void>((resolve, reject) =>
    execFile(
      "npx",
      [
        "tsc",
        "--outDir",
        OUT,
        "--rootDir",
        ".",
        "--strict",
        "--module",
        "NodeNext",
        "--moduleResolution",
        "NodeNext",
        "--target",
        "ES2022",
        "--skipLibCheck",
        "--esModuleInterop",
        "--types",
        "node",
        "services/billing/boleto/render-pool.ts",
        "services/billing/boleto/render-worker.ts",
      ],
      { cwd: ROOT },
      (err, stdout, stderr) => (err ? reject(new Error(`tsc failed:\n${stdout}${stderr}`)) : resolve()),
    ),
  );
}, 120_000);
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe("compiled render pool", () => {
  it("renders in a worker thread loaded from render-worker.js", async () => {
    const { RenderPool } = (await import(
      pathToFileURL(join(OUT, "services/billing/boleto/render-pool.js")).href
    )) as typeof import("./render-pool.js");
    const pool = new RenderPool(1, 30_000);
    try {
      const ficha = prepareItem(boletoValido(1), {
        itemId: "x",
        dataProcessamento: { year: 2026, month: 11, day: 29 },
        sandbox: false,
      }).ficha;
      const pdf = await pool.render(ficha);
      expect(Buffer.from(pdf).subarray(0, 5).toString()).toBe("%PDF-");
    } finally {
      await pool.close();
    }
  });
});
