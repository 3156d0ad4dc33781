// No Docker engine here or in CI: these check the Dockerfile's promises statically, and that every file
// it copies survives Dockerfile.dockerignore (an allow-list: a forgotten entry would break the build).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./config-vars.js";

const dockerfile = readFileSync(join(ROOT, "docker", "Dockerfile"), "utf8");
const ignore = readFileSync(join(ROOT, "docker", "Dockerfile.dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** The instructions of one stage, from its FROM line to the next. */
function stage(name: string): string[] {
  const lines = dockerfile.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#"));
  const start = lines.findIndex((l) => new RegExp(`^FROM .* AS ${name}$`).test(l));
  if (start < 0) throw new Error(`no stage ${name}`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("FROM "));
  return lines.slice(start, end < 0 ? undefined : end);
}

/** Whether the allow-list lets a context path through: a `!path`, `!path/**` or `!dir/**` above it. */
function allowed(path: string): boolean {
  return ignore.some(
    (p) => p.startsWith("!") && (p === `!${path}` || p === `!${path}/**` || (p.endsWith("/**") && path.startsWith(p.slice(1, -2)))),
  );
}

describe("docker/Dockerfile", () => {
  it("the runtime stage: slim Node LTS, production dependencies, compiled code, migrations beside package.json, non-root", () => {
    const runtime = stage("runtime");
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(20|22|24)-bookworm-slim$/m);
    expect(stage("prod-deps").join("\n")).toMatch(/npm ci --omit=dev/);
    expect(runtime).toEqual(
      expect.arrayContaining([
        "COPY package.json ./",
        "COPY migrations migrations",
        "COPY --from=prod-deps /app/node_modules node_modules",
        "COPY --from=build /app/dist dist",
        'ENTRYPOINT ["node", "docker/entrypoint.js"]',
      ]),
    );
    const user = runtime.find((l) => l.startsWith("USER "));
    expect(user).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
    // Nothing from the build stage's full node_modules (dev dependencies) reaches the runtime image.
    expect(runtime.some((l) => /--from=(deps|build) \/app\/node_modules/.test(l))).toBe(false);
  });

  it("every file a stage copies from the context is allowed by Dockerfile.dockerignore", () => {
    const sources = dockerfile
      .split("\n")
      .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+/, "")
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(5);
    expect(sources.filter((s) => !allowed(s))).toEqual([]);
    expect(allowed("node_modules")).toBe(false);
  });
});
