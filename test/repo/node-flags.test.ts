// `npm start` (scripts/dev.sh) starts each service with the V8 flags libs/rpc/mesh.ts gives it; the
// deployments are checked where they are tested (k8s, compose, systemd lint).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MESH, mallocEnvOf, NODE_FLAGS, type MeshServiceName } from "../../libs/rpc/mesh.js";
import { ROOT } from "../../docker/config-vars.js";

describe("per-service V8 flags in scripts/dev.sh", () => {
  it("sets exactly the flags of NODE_FLAGS for each service", () => {
    const text = readFileSync(join(ROOT, "scripts", "dev.sh"), "utf8");
    const set = new Map([...text.matchAll(/\[\[ \$name == ([a-z-]+) \]\] && flags=\(([^)]*)\)/g)].map((m) => [m[1]!, m[2]!.trim()]));
    for (const name of Object.keys(MESH) as MeshServiceName[]) expect(set.get(name), name).toBe(NODE_FLAGS[name]?.join(" "));
    expect(text).toMatch(/env "\$\{menv\[@\]\}" node "\$\{flags\[@\]\}" --import tsx "services\/\$name\/main\.ts"/);
  });

  it("sets exactly the allocator variables of MALLOC_ENV for each service", () => {
    const text = readFileSync(join(ROOT, "scripts", "dev.sh"), "utf8");
    const set = new Map([...text.matchAll(/\[\[ \$name == ([a-z-]+) \]\] && menv=\(([^)]*)\)/g)].map((m) => [m[1]!, m[2]!.trim()]));
    for (const name of Object.keys(MESH) as MeshServiceName[]) {
      const wanted = Object.entries(mallocEnvOf(name)).map(([k, v]) => `${k}=${v}`);
      expect(set.get(name), name).toBe(wanted.length ? wanted.join(" ") : undefined);
    }
  });
});
