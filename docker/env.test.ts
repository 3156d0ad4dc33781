import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { documentedVariables, ROOT, runtimeVariables, SERVICE_NAMES, serviceVariables } from "./config-vars.js";

describe("docker/.env.example", () => {
  const documented = documentedVariables(readFileSync(join(ROOT, "docker", ".env.example"), "utf8"));

  it("the source scan finds the variables we know are read (so an empty scan cannot pass)", () => {
    expect(runtimeVariables()).toContain("GRPC_PORT");
    expect(runtimeVariables()).toContain("ADN_GATEWAY_URL");
    expect(serviceVariables("vault")).toContain("NFSE_MASTER_KEYS_FILE");
    expect(serviceVariables("coordinator")).toContain("NATS_URL");
    expect(serviceVariables("artifacts")).toContain("ARTIFACT_LINK_SECRET_FILE");
  });

  it("documents every variable a service reads", () => {
    const read = new Set([...runtimeVariables(), ...SERVICE_NAMES.flatMap((s) => [...serviceVariables(s)])]);
    const missing = [...read].filter((name) => !documented.has(name)).sort();
    expect(missing).toEqual([]);
  });

  it("holds placeholders only, never a usable secret", () => {
    const text = readFileSync(join(ROOT, "docker", ".env.example"), "utf8");
    for (const line of text.split("\n")) {
      const m = /^([A-Z][A-Z0-9_]*(SECRET|KEY|PASSWORD)[A-Z0-9_]*)=(.*)$/.exec(line);
      if (m) expect(m[3], m[1]).toMatch(/^CHANGE_ME/);
    }
  });
});
