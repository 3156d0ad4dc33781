// Which environment variables the code reads, found by scanning the source: the ground truth that
// .env.example, the systemd environment files and the Kubernetes ConfigMaps are checked against, so a
// new variable in a service's config cannot go undocumented.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MESH, peerUrlVariable, type MeshServiceName } from "../libs/rpc/mesh.js";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SERVICE_NAMES = Object.keys(MESH) as MeshServiceName[];

// `env.int("NAME"`, `env.optionalString("NAME")`, `get("NAME")` (vault master keys), `ConfigError("NAME"`.
const READ = /\b(?:env\.\w+|get|ConfigError|readSecretFile)\(\s*"([A-Z][A-Z0-9_]+)"/g;
// `readSecret(env, "NAME")` (vault): NAME and NAME_FILE.
const SECRET = /\breadSecret\(\s*env\s*,\s*"([A-Z][A-Z0-9_]+)"/g;
// `readPageTokenSecret(env, "NAME")` (libs/rpc/page-token.ts): NAME alone.
const PAGE_TOKEN_SECRET = /\breadPageTokenSecret\(\s*env\s*,\s*"([A-Z][A-Z0-9_]+)"/g;
const PEER = /\b(?:peerClient\(\s*env\s*,|peerUrlVariable\()\s*"([a-z-]+)"/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => !p.includes(`${join("services", "store", "testing")}`));
}

function scan(dir: string): Set<string> {
  const names = new Set<string>();
  for (const file of sources(dir)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(READ)) names.add(m[1]!);
    for (const m of text.matchAll(SECRET)) names.add(m[1]!).add(`${m[1]!}_FILE`);
    for (const m of text.matchAll(PAGE_TOKEN_SECRET)) names.add(m[1]!);
    for (const m of text.matchAll(PEER)) names.add(peerUrlVariable(m[1] as MeshServiceName));
  }
  return names;
}

/** Variables every service reads through runService and peerClient (libs/rpc). */
export function runtimeVariables(): Set<string> {
  const names = scan(join(ROOT, "libs", "rpc"));
  for (const s of SERVICE_NAMES) names.add(peerUrlVariable(s));
  return names;
}

/** Variables one service reads in its own code (services/<name>), peers' URLs included. */
export function serviceVariables(name: MeshServiceName): Set<string> {
  return scan(join(ROOT, "services", name));
}

/** `NAME=` or `# NAME=` lines of an env file: what it documents. */
export function documentedVariables(text: string): Set<string> {
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
}
