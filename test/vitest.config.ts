import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Lives in test/ to keep the repository root to its documented entries; the root is one level up.
const root = fileURLToPath(new URL("..", import.meta.url));
const DIRS = ["libs", "services", "scripts", "cli", "tools", "test", "deploy", "docker"];
const exclude = ["**/node_modules/**", "dist/**"];

// Suites by cost. A test needs the stack (MariaDB, NATS) when it uses the helpers that reach it, or runs the
// quickstart; one that starts the mesh's processes is a mesh test. Everything else is a unit test: seconds,
// no database, no NATS (`npm run test:unit`). Read from the files, so a new test lands in the right suite.
const NEEDS_MESH = /support\/(nfse-mesh|billing-mesh|danfse-mesh|service-process|mesh-env)\.js|startService\(|\bnpm", \["start"/;
const NEEDS_DB = /support\/(mysql|nats-server|private-mariadb)\.js|createThrowawayDatabase|process\.env\.(NATS_URL|MYSQL_URL)/;

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (entry.name.endsWith(".test.ts")) out.push(relative(root, join(root, path)));
  }
  return out;
}

const suites: Record<"unit" | "db" | "mesh", string[]> = { unit: [], db: [], mesh: [] };
for (const file of DIRS.flatMap(testFiles)) {
  const text = readFileSync(join(root, file), "utf8");
  suites[NEEDS_MESH.test(text) ? "mesh" : NEEDS_DB.test(text) ? "db" : "unit"].push(file);
}

export default defineConfig({
  test: {
    root,
    // Tests start real servers and child processes: generous limits, no wall-clock assertions.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
    projects: (["unit", "db", "mesh"] as const).map((name) => ({
      extends: true as const,
      test: { name, include: suites[name].length ? suites[name] : ["<none>"], exclude },
    })),
  },
});
