// The console's web app built into a directory of the test's own (never dist/console, which a developer's
// `npm start` may be serving), and an operators file with known tokens.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Role } from "../../services/console/api-types.js";
import { tokenDigest } from "../../services/console/users.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export function buildConsoleApp(outDir: string): Promise<void> {
  const vite = join(ROOT, "node_modules", "vite", "bin", "vite.js");
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [vite, "build", "--config", "services/console/web/vite.config.ts", "--outDir", outDir, "--emptyOutDir"],
      { cwd: ROOT },
      (err, stdout, stderr) => (err ? reject(new Error(`vite build failed:\n${stdout}${stderr}`)) : resolve()),
    ),
  );
}

export function writeUsersFile(path: string, users: { user: string; role: Role; token: string; tenants?: "*" | string[] }[]): void {
  const scope = (t: "*" | string[] | undefined) => (t === undefined ? "" : ` tenants=${t === "*" ? "*" : t.join(",")}`);
  writeFileSync(path, users.map((u) => `${u.user} ${u.role} ${tokenDigest(u.token).toString("hex")}${scope(u.tenants)}\n`).join(""), {
    mode: 0o600,
  });
}
