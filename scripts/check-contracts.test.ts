// The CI contract gates, run for real on a throwaway clone of this repository: buf breaking warns while
// the API is pre-release and fails once proto/STABLE exists; the codegen check catches stale libs/gen.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
let clone: string;

function run(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { cwd: clone, env: { ...process.env, BUF_BREAKING_AGAINST: "" } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
    ),
  );
}
const git = (...args: string[]) => run("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...args]);
const VAULT_PROTO = "proto/malha/vault/v1/vault.proto";

function edit(path: string, from: string, to: string): void {
  const text = readFileSync(join(clone, path), "utf8");
  if (!text.includes(from)) throw new Error(`${path} does not contain ${from}`);
  writeFileSync(join(clone, path), text.replace(from, to));
}

beforeAll(async () => {
  clone = mkdtempSync(join(tmpdir(), "malha-contracts-"));
  await new Promise<void>((resolve, reject) => execFile("git", ["clone", "-q", ROOT, clone], (err) => (err ? reject(err) : resolve())));
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
});
afterAll(() => rmSync(clone, { recursive: true, force: true }));

describe("contract gates", () => {
  it("codegen check passes on a clean tree and fails when a proto changed without regenerating", async () => {
    expect((await run("bash", ["scripts/check-codegen.sh"])).code).toBe(0);
    edit(VAULT_PROTO, "message GetCertificateRequest {", "message GetCertificateRequest {\n  // Added.\n  string added_field = 99;");
    const stale = await run("bash", ["scripts/check-codegen.sh"]);
    expect(stale.code).toBe(1);
    expect(stale.out).toContain("generated code is stale");
    expect(stale.out).toContain("libs/gen/malha/vault/v1/vault_pb.ts");
    await git("checkout", "-q", "--", ".");
  });

  it("buf breaking warns about a breaking change before proto/STABLE and fails after", async () => {
    edit(
      VAULT_PROTO,
      "  // Certificate id.\n  string id = 1 [\n    (buf.validate.field).string.max_len = 128\n  ];\n}\n\n// Response of GetCertificate.",
      "  // Certificate id.\n  int64 id = 1;\n}\n\n// Response of GetCertificate.",
    );
    await git("commit", "-qam", "retype GetCertificateRequest.id");
    const warned = await run("bash", ["scripts/check-breaking.sh"]);
    expect(warned.code).toBe(0);
    expect(warned.out).toContain("WARNING");
    expect(warned.out).toContain('"id" on message "GetCertificateRequest" changed type from "string" to "int64"');

    writeFileSync(join(clone, "proto/STABLE"), "v1 is stable\n");
    await git("add", "proto/STABLE");
    await git("commit", "-qm", "mark stable");
    // The previous commit already has the retyped field, so compare against the one before it.
    const failed = await run("bash", ["-c", "BUF_BREAKING_AGAINST=HEAD~2 bash scripts/check-breaking.sh"]);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain("FAILED");

    const unchanged = await run("bash", ["scripts/check-breaking.sh"]);
    expect(unchanged.code).toBe(0);
    expect(unchanged.out).toContain("no breaking change");
  });
});
