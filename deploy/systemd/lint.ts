// A small lint for the unit files, because `systemd-analyze verify` is not on every CI machine (and only
// warns): known sections and keys, the restart policy, the hardening every unit must keep, and where
// ExecStart and EnvironmentFile point, and the service's own V8 flags.
import { type MeshServiceName, mallocEnvOf, nodeOptionsOf } from "../../libs/rpc/mesh.js";

export type Unit = Map<string, [key: string, value: string][]>;

export function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: [string, string][] | undefined;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = [];
      unit.set(header[1]!, section);
      continue;
    }
    const eq = line.indexOf("=");
    if (!section || eq <= 0) throw new Error(`line ${i + 1}: expected [Section] or Key=value`);
    section.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return unit;
}

const KNOWN: Record<string, readonly string[]> = {
  Unit: ["Description", "Documentation", "Wants", "Requires", "After", "Before", "PartOf", "StartLimitIntervalSec", "StartLimitBurst"],
  Service: [
    "Type",
    "User",
    "Group",
    "WorkingDirectory",
    "Environment",
    "EnvironmentFile",
    "LoadCredential",
    "ExecStart",
    "Restart",
    "RestartSec",
    "RestartPreventExitStatus",
    "KillSignal",
    "TimeoutStopSec",
    "LimitNOFILE",
    "UMask",
    "StateDirectory",
    "StateDirectoryMode",
    "ReadWritePaths",
    "NoNewPrivileges",
    "CapabilityBoundingSet",
    "AmbientCapabilities",
    "ProtectSystem",
    "ProtectHome",
    "PrivateTmp",
    "PrivateDevices",
    "ProtectKernelTunables",
    "ProtectKernelModules",
    "ProtectKernelLogs",
    "ProtectControlGroups",
    "ProtectClock",
    "ProtectHostname",
    "ProtectProc",
    "ProcSubset",
    "RestrictNamespaces",
    "RestrictRealtime",
    "RestrictSUIDSGID",
    "RestrictAddressFamilies",
    "LockPersonality",
    "RemoveIPC",
    "SystemCallArchitectures",
    "SystemCallFilter",
    "SystemCallErrorNumber",
  ],
  Install: ["WantedBy"],
};

/** Settings every service unit must carry with exactly these values. */
export const REQUIRED: Record<string, string> = {
  Restart: "on-failure",
  RestartPreventExitStatus: "78",
  NoNewPrivileges: "yes",
  CapabilityBoundingSet: "",
  AmbientCapabilities: "",
  ProtectSystem: "strict",
  ProtectHome: "yes",
  PrivateTmp: "yes",
  PrivateDevices: "yes",
  RestrictSUIDSGID: "yes",
  SystemCallArchitectures: "native",
  User: "malha",
};

export function lintServiceUnit(text: string, service: string): string[] {
  const problems: string[] = [];
  let unit: Unit;
  try {
    unit = parseUnit(text);
  } catch (err) {
    return [(err as Error).message];
  }
  for (const [section, entries] of unit) {
    const known = KNOWN[section];
    if (!known) {
      problems.push(`unknown section [${section}]`);
      continue;
    }
    for (const [key] of entries) if (!known.includes(key)) problems.push(`unknown key ${key} in [${section}]`);
  }
  for (const section of ["Unit", "Service", "Install"]) if (!unit.has(section)) problems.push(`missing [${section}]`);
  const service_ = unit.get("Service") ?? [];
  const values = (key: string) => service_.filter(([k]) => k === key).map(([, v]) => v);
  for (const [key, want] of Object.entries(REQUIRED)) {
    const got = values(key);
    if (got.length === 0) problems.push(`missing ${key}=${want}`);
    else if (got.at(-1) !== want) problems.push(`${key} must be "${want}", is "${got.at(-1)}"`);
  }
  const exec = values("ExecStart");
  if (exec.length !== 1 || !new RegExp(`^/usr/bin/node /opt/malha/dist/services/${service}/main\\.js$`).test(exec[0]!)) {
    problems.push(`ExecStart must run node /opt/malha/dist/services/${service}/main.js`);
  }
  if (!values("EnvironmentFile").includes(`/etc/malha/${service}.env`)) problems.push(`missing EnvironmentFile=/etc/malha/${service}.env`);
  // The service's own V8 flags (libs/rpc/mesh.ts NODE_FLAGS), and none for a service that has none.
  const nodeOptions = values("Environment")
    .find((e) => e.startsWith("NODE_OPTIONS="))
    ?.slice("NODE_OPTIONS=".length);
  const wanted = nodeOptionsOf(service as MeshServiceName);
  if (nodeOptions !== wanted) problems.push(`Environment=NODE_OPTIONS must be ${wanted === undefined ? "absent" : `"${wanted}"`}`);
  // Its allocator settings (libs/rpc/mesh.ts MALLOC_ENV), and none for a service that has none.
  const malloc = Object.fromEntries(
    values("Environment")
      .filter((e) => e.startsWith("MALLOC_"))
      .map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]),
  );
  const wantedMalloc = mallocEnvOf(service as MeshServiceName);
  if (JSON.stringify(Object.entries(malloc).sort()) !== JSON.stringify(Object.entries(wantedMalloc).sort())) {
    problems.push(`Environment=MALLOC_* must be ${JSON.stringify(wantedMalloc)}, is ${JSON.stringify(malloc)}`);
  }
  // A secret on a command line or in Environment= is world-readable through /proc and `systemctl show`.
  for (const env of values("Environment")) {
    if (/(SECRET|KEY|PASSWORD)=(?!%d\/)/.test(env)) problems.push(`secret in Environment=: ${env.split("=")[0]}`);
  }
  return problems;
}
