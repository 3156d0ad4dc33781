import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { MESH, mallocEnvOf, nodeOptionsOf } from "../libs/rpc/mesh.js";
import { composeValidator } from "./compose-schema.js";
import { documentedVariables, ROOT, runtimeVariables, SERVICE_NAMES, serviceVariables } from "./config-vars.js";

interface ComposeService {
  command?: string[];
  image?: string;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  read_only?: boolean;
  cap_drop?: string[];
  network_mode?: string;
  volumes?: (string | { type: string; source?: string; bind?: { create_host_path?: boolean } })[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}

const text = readFileSync(join(ROOT, "docker", "compose.yaml"), "utf8");
// Compose resolves YAML merge keys (`<<: *service`); so must we, or the anchored settings vanish.
const compose = parse(text, { merge: true }) as ComposeFile;
const validate = composeValidator();

describe("docker/compose.yaml", () => {
  it("validates against the compose schema, which still rejects an unknown key", () => {
    expect(validate(compose)).toEqual([]);
    const broken = structuredClone(compose);
    (broken.services.store as Record<string, unknown>).portz = ["1"];
    expect(validate(broken).join("\n")).toMatch(/services\/store .*additional properties.*portz/);
  });

  it("runs MySQL 5.6, NATS with JetStream, the ADN simulator and the six services", () => {
    expect(compose.services.mysql?.image).toBe("mysql:5.6");
    expect(compose.services.nats?.command).toContain("--jetstream");
    expect(compose.services["adn-sim"]).toBeDefined();
    for (const name of SERVICE_NAMES) expect(compose.services[name]?.command, name).toEqual([name]);
  });

  it("gives every container a health check, and each mesh service a gRPC one on its own port", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      expect(svc.healthcheck?.test?.length, name).toBeGreaterThan(1);
    }
    for (const name of SERVICE_NAMES) {
      expect(compose.services[name]!.healthcheck!.test).toEqual(["CMD", "node", "docker/healthcheck.js", String(MESH[name].port)]);
    }
  });

  it("starts a service only after what it depends on is healthy", () => {
    const needs: Record<string, string[]> = {
      vault: ["mysql"],
      store: ["mysql"],
      artifacts: ["mysql"],
      "adn-gateway": ["adn-sim", "vault", "store"],
      coordinator: ["nats", "store", "vault", "adn-gateway"],
      billing: ["mysql", "nats", "artifacts"],
      console: ["coordinator", "store", "vault"],
    };
    for (const [name, deps] of Object.entries(needs)) {
      const declared = compose.services[name]!.depends_on ?? {};
      expect(Object.keys(declared).sort(), name).toEqual([...deps].sort());
      for (const dep of deps) expect(declared[dep]!.condition).toBe("service_healthy");
    }
  });

  it("runs the mesh services hardened: read-only root, no capabilities", () => {
    for (const name of SERVICE_NAMES) {
      const svc = compose.services[name]!;
      expect(svc.read_only, name).toBe(true);
      expect(svc.cap_drop, name).toEqual(["ALL"]);
    }
  });

  it("passes each service only variables it reads (a typo would be silently ignored otherwise)", () => {
    for (const name of SERVICE_NAMES) {
      const known = new Set([...runtimeVariables(), ...serviceVariables(name)]);
      // NODE_OPTIONS is Node's own: set only for a service with V8 flags of its own (libs/rpc/mesh.ts NODE_FLAGS).
      if (nodeOptionsOf(name)) known.add("NODE_OPTIONS");
      // glibc's, likewise: only the allocator settings of MALLOC_ENV.
      for (const key of Object.keys(mallocEnvOf(name))) known.add(key);
      for (const key of Object.keys(compose.services[name]!.environment ?? {})) expect(known.has(key), `${name} ${key}`).toBe(true);
    }
  });

  it("starts each service with its own V8 flags, as libs/rpc/mesh.ts NODE_FLAGS says", () => {
    for (const name of SERVICE_NAMES) {
      const env = (compose.services[name]!.environment ?? {}) as Record<string, string>;
      expect(env.NODE_OPTIONS, name).toBe(nodeOptionsOf(name));
      const malloc = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("MALLOC_")));
      expect(malloc, name).toEqual(mallocEnvOf(name));
    }
  });

  it("every variable compose interpolates is documented in .env.example", () => {
    const documented = documentedVariables(readFileSync(join(ROOT, "docker", ".env.example"), "utf8"));
    const used = new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
    expect([...used].filter((v) => !documented.has(v))).toEqual([]);
  });

  it("keeps secrets out of the file: every secret comes from docker/.env", () => {
    for (const svc of Object.values(compose.services)) {
      for (const [key, value] of Object.entries(svc.environment ?? {})) {
        if (/SECRET|MASTER_KEY|PASSWORD/.test(key)) expect(value, key).toMatch(/^\$\{[A-Z_]+(:\?[^}]*)?\}$/);
      }
    }
  });

  it("the guides give every step `up` needs: each file bind-mounted without create_host_path, and Compose v2", () => {
    const mustExist = Object.values(compose.services).flatMap((svc) =>
      (svc.volumes ?? []).flatMap((v) =>
        typeof v === "object" && v.type === "bind" && v.bind?.create_host_path === false && v.source ? [v.source] : [],
      ),
    );
    expect(mustExist).toEqual(["./billing-tenant-tokens", "./console-users"]);
    for (const guide of ["README.md", "docker/README.md"]) {
      const doc = readFileSync(join(ROOT, guide), "utf8").replace(/\s+/g, " ");
      for (const source of mustExist) {
        // A command that makes the file from its example, from the repository root (where the guides run).
        const file = join("docker", source);
        expect(doc, `${guide}: how to make ${file}`).toContain(`cp ${file}.example ${file}`);
      }
      expect(doc, `${guide}: which Compose`).toMatch(/Compose v2/);
      expect(doc, `${guide}: v1 is not enough`).toMatch(/docker-compose` 1\.29/);
    }
    for (const source of mustExist) expect(readFileSync(join(ROOT, "docker", `${source}.example`), "utf8").length).toBeGreaterThan(0);
  });
});
