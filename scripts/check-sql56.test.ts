import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", join(ROOT, "scripts/check-sql56.ts"), ...args], { cwd: ROOT }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe("scripts/check-sql56.ts", () => {
  it("fails bad.sql with file:line: rule: message lines and a summary", { timeout: 30_000 }, async () => {
    const { code, stdout } = await run(["test/fixtures/sql56/bad.sql"]);
    expect(code).toBe(1);
    const out = stdout.trim().split("\n");
    expect(out.slice(0, 3).map((l) => l.split(": ").slice(0, 2).join(": "))).toEqual([
      "test/fixtures/sql56/bad.sql:5: json",
      "test/fixtures/sql56/bad.sql:8: index-length",
      "test/fixtures/sql56/bad.sql:11: cte",
    ]);
    expect(out[3]).toBe("sql56: 3 finding(s) in 1 of 1 file(s)");
  });

  it("passes migrations/ and the good fixture", { timeout: 30_000 }, async () => {
    const { code, stdout } = await run(["migrations", "test/fixtures/sql56/good.sql"]);
    expect(stdout.trim().split("\n").at(-1)).toMatch(/^sql56: \d+ file\(s\) clean$/);
    expect(code).toBe(0);
  });

  it("exits 2 on usage errors", { timeout: 30_000 }, async () => {
    expect((await run([])).code).toBe(2);
    const missing = await run(["no/such/dir"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toBe("check-sql56: cannot read no/such/dir");
  });
});
