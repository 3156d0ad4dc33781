import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { documentedVariables, ROOT, runtimeVariables, SERVICE_NAMES, serviceVariables } from "../../docker/config-vars.js";
import { lintServiceUnit, parseUnit } from "./lint.js";

const DIR = join(ROOT, "deploy", "systemd");
const unitText = (service: string) => readFileSync(join(DIR, `malha-${service}.service`), "utf8");

function hasSystemdAnalyze(): boolean {
  return spawnSync("systemd-analyze", ["--version"], { stdio: "ignore" }).status === 0;
}

describe("deploy/systemd units", () => {
  it.each(SERVICE_NAMES)("malha-%s.service passes the lint", (service) => {
    expect(lintServiceUnit(unitText(service), service)).toEqual([]);
  });

  it("the lint catches a weakened or misdirected unit", () => {
    const weakened = unitText("store")
      .replace("ProtectSystem=strict", "ProtectSystem=full")
      .replace("RestartPreventExitStatus=78\n", "")
      .replace("NoNewPrivileges=yes", "NoNewPrivilege=yes")
      .replace("dist/services/store/main.js", "dist/services/vault/main.js");
    expect(lintServiceUnit(weakened, "store")).toEqual(
      expect.arrayContaining([
        'ProtectSystem must be "strict", is "full"',
        "missing RestartPreventExitStatus=78",
        "unknown key NoNewPrivilege in [Service]",
        "ExecStart must run node /opt/malha/dist/services/store/main.js",
      ]),
    );
    const leaky = unitText("store").replace(
      "Environment=NODE_ENV=production",
      "Environment=NODE_ENV=production\nEnvironment=MYSQL_PASSWORD=hunter2",
    );
    expect(lintServiceUnit(leaky, "store")).toEqual(["secret in Environment=: MYSQL_PASSWORD"]);
    expect(lintServiceUnit(unitText("store").replace("[Install]", "[Install]\nEnvironment=X_SECRET=1"), "store")).toContain(
      "unknown key Environment in [Install]",
    );
  });

  it("hands secret files to the services through LoadCredential, never the environment", () => {
    const creds = (s: string) =>
      (parseUnit(unitText(s)).get("Service") ?? []).filter(([k]) => k === "LoadCredential").map(([, v]) => v.split(":")[0]);
    expect(creds("vault")).toEqual(["master-key", "vault-credentials", "vault-admin"]);
    expect(creds("adn-gateway")).toEqual(["vault-credentials"]);
    expect(creds("artifacts")).toEqual(["artifact-link"]);
    expect(creds("console")).toEqual(["console-session", "vault-admin"]);
    expect(unitText("artifacts")).toContain("ReadWritePaths=/var/lib/malha/artifacts");
  });

  it("malha.target wants every service and each unit is part of it", () => {
    const wants = parseUnit(readFileSync(join(DIR, "malha.target"), "utf8"))
      .get("Unit")!
      .find(([k]) => k === "Wants")![1]
      .split(/\s+/);
    expect(wants.sort()).toEqual(SERVICE_NAMES.map((s) => `malha-${s}.service`).sort());
    for (const s of SERVICE_NAMES) expect(unitText(s)).toContain("PartOf=malha.target");
  });

  it.each(SERVICE_NAMES)("env/%s.env.example documents every variable the service reads", (service) => {
    const documented = documentedVariables(readFileSync(join(DIR, "env", `${service}.env.example`), "utf8"));
    const read = [...runtimeVariables(), ...serviceVariables(service)];
    expect(read.filter((v) => !documented.has(v) && v !== "ARTIFACT_DIR").sort()).toEqual([]);
  });

  it("systemd-analyze verify accepts every unit (required where systemd is installed)", () => {
    if (!hasSystemdAnalyze()) {
      // No systemd here (minimal CI containers): the lint above is the check; say so instead of passing silently.
      expect(hasSystemdAnalyze()).toBe(false);
      return;
    }
    const tmp = mkdtempSync(join(tmpdir(), "malha-units-"));
    try {
      const files = [...SERVICE_NAMES.map((s) => `malha-${s}.service`), "malha.target"];
      for (const f of files) {
        // Verify checks that ExecStart's binary exists: point it at this machine's node.
        writeFileSync(join(tmp, f), readFileSync(join(DIR, f), "utf8").replaceAll("/usr/bin/node", process.execPath));
      }
      const verify = (names: string[]) => spawnSync("systemd-analyze", ["verify", "--man=no", ...names], { cwd: tmp, encoding: "utf8" });
      const ok = verify(files.map((f) => `./${f}`));
      expect(ok.stderr.trim()).toBe("");
      expect(ok.status).toBe(0);
      writeFileSync(join(tmp, "broken.service"), unitText("store").replace("Restart=on-failure", "Restart=sometimes"));
      expect(verify(["./broken.service"]).stderr).toContain("restart specifier");
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("example files hold no usable secret", () => {
    for (const s of SERVICE_NAMES) {
      const text = readFileSync(join(DIR, "env", `${s}.env.example`), "utf8");
      for (const m of text.matchAll(/^([A-Z_]*(?:SECRET|PASSWORD)[A-Z_]*|MYSQL_URL)=(.*)$/gm))
        expect(m[2], `${s} ${m[1]}`).toMatch(/CHANGE_ME/);
      expect(statSync(join(DIR, "env", `${s}.env.example`)).isFile()).toBe(true);
    }
    expect(execFileSync("git", ["check-ignore", "-q", "--no-index", "docker/.env"], { cwd: ROOT, stdio: "pipe" }).length).toBe(0);
  });
});

describe("deploy/systemd/README.md prerequisites", () => {
  const guide = readFileSync(join(DIR, "README.md"), "utf8");
  const prerequisites = guide.slice(guide.indexOf("## 1. Prerequisites"), guide.indexOf("## 2."));
  const semver = (v: string): number[] => v.split(".").map(Number);
  const atLeast = (a: number[], b: number[]) => (a[0]! - b[0]! || a[1]! - b[1]! || (a[2] ?? 0) - (b[2] ?? 0)) >= 0;

  it("asks for the Node.js package.json requires, and not Debian's nodejs (18.x), which cannot meet it", () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
    expect(prerequisites).toContain(`Node.js ≥ ${engines.replace(">=", "")}`);
    // No install line takes nodejs from Debian's archive as if it were enough.
    expect(prerequisites).not.toMatch(/apt-get install[^\n]*\bnodejs\b[^\n]*Debian's nodejs/);
    expect(prerequisites).not.toMatch(/^apt-get install[^\n#]*\bnodejs\b/m);
    expect(prerequisites).toMatch(/NodeSource/);
    expect(prerequisites).toMatch(/node --version/);
  });

  it("asks for a nats-server no newer than the one the test suite runs against (Debian's)", () => {
    const asked = /NATS with JetStream, server ≥ (\d+\.\d+)/.exec(prerequisites)?.[1];
    expect(asked, "the guide states a minimum nats-server").toBeDefined();
    const tested = /v(\d+\.\d+\.\d+)/.exec(execFileSync("nats-server", ["--version"], { encoding: "utf8" }))![1]!;
    expect(atLeast(semver(tested), semver(asked!)), `guide asks ${asked}, tests run ${tested}`).toBe(true);
    expect(prerequisites).not.toMatch(/nats-server 2\.10\+/);
  });
});
