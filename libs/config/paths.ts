import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository (or installed package) root, found by walking up to package.json, so the same code
 * finds `migrations/` whether it runs from source with tsx or compiled under dist/.
 */
export function projectRoot(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "migrations"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no project root above ${fileURLToPath(from)}`);
    dir = parent;
  }
}
