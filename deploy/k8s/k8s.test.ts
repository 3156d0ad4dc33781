import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MESH, mallocEnvOf, nodeOptionsOf } from "../../libs/rpc/mesh.js";
import { ROOT, runtimeVariables, SERVICE_NAMES, serviceVariables } from "../../docker/config-vars.js";
import { kubectlVersionOf, render, requireKubectl, validateAll, type K8sObject } from "./render.js";

interface Container {
  name: string;
  args?: string[];
  restartPolicy?: string;
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  readinessProbe?: { grpc?: { port: number } };
  livenessProbe?: { grpc?: { port: number } };
  startupProbe?: { grpc?: { port: number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: object }[];
}
interface Workload extends K8sObject {
  spec: { replicas?: number; template: { spec: PodSpec } };
}
interface Peer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface Policy extends K8sObject {
  spec: {
    podSelector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values: string[] }[] };
    policyTypes?: string[];
    ingress?: {
      from?: { podSelector?: { matchLabels?: Record<string, string> }; namespaceSelector?: object; ipBlock?: object }[];
      ports?: { port: number | string }[];
    }[];
    egress?: { to?: Peer[]; ports?: { protocol?: string; port: number | string }[] }[];
  };
}

const OVERLAYS = ["dev", "prod"] as const;
/** The image each overlay's `images:` block sets for the seven services (and only that one). */
const IMAGES: Record<(typeof OVERLAYS)[number], string> = { dev: "malha:dev", prod: "registry.example.org/malha:0.1.0" };
/** Where each overlay's MySQL and NATS are: every egress rule to their ports must name exactly these peers. */
const DATA_PEERS: Record<(typeof OVERLAYS)[number], { mysql: Peer[]; nats: Peer[] }> = {
  dev: {
    mysql: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "mysql" } } }],
    nats: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } } }],
  },
  prod: {
    mysql: [{ ipBlock: { cidr: "198.51.100.0/24" } }],
    nats: [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "nats" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } },
      },
    ],
  },
};
const rendered: Record<string, K8sObject[]> = {};

beforeAll(() => {
  requireKubectl();
  for (const overlay of OVERLAYS) rendered[overlay] = render(join(ROOT, "deploy/k8s/overlays", overlay));
});

const of = <T extends K8sObject>(overlay: string, kind: string) => rendered[overlay]!.filter((o) => o.kind === kind) as T[];
const deployment = (overlay: string, name: string) => of<Workload>(overlay, "Deployment").find((d) => d.metadata.name === name)!;

describe.each(OVERLAYS)("kustomize overlay %s", (overlay) => {
  it("renders, and every object validates against the Kubernetes schemas", async () => {
    expect(rendered[overlay]!.length).toBeGreaterThan(20);
    expect(await validateAll(rendered[overlay]!)).toEqual([]);
  });

  it("has a Deployment, Service and PodDisruptionBudget per service, in one namespace", () => {
    for (const name of SERVICE_NAMES) {
      expect(deployment(overlay, name), name).toBeDefined();
      expect(
        of(overlay, "Service").some((s) => s.metadata.name === name),
        name,
      ).toBe(true);
      expect(
        of(overlay, "PodDisruptionBudget").some((s) => s.metadata.name === name),
        name,
      ).toBe(true);
      expect(deployment(overlay, name).spec.template.spec.containers[0]!.args).toEqual([name]);
    }
    const namespaces = new Set(rendered[overlay]!.filter((o) => o.kind !== "Namespace").map((o) => o.metadata.namespace));
    expect(namespaces.size).toBe(1);
  });

  it("runs the overlay's image in every service container (the base sets no image of its own)", () => {
    for (const name of SERVICE_NAMES) {
      const images = deployment(overlay, name)
        .spec.template.spec.containers.filter((c) => c.name === name)
        .map((c) => (c as { image?: string }).image);
      expect(images, name).toEqual([IMAGES[overlay]]);
    }
  });

  it("probes every service with native gRPC health on its own port", () => {
    for (const name of SERVICE_NAMES) {
      const c = deployment(overlay, name).spec.template.spec.containers.find((x) => x.name === name)!;
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) expect(probe?.grpc?.port, name).toBe(MESH[name].port);
    }
  });

  it("starts each service with its own V8 flags, as libs/rpc/mesh.ts NODE_FLAGS says, and no other", () => {
    for (const name of SERVICE_NAMES) {
      const main = deployment(overlay, name).spec.template.spec.containers.find((c) => c.args?.[0] === name);
      expect(main, name).toBeDefined();
      expect(main!.env?.find((e) => e.name === "NODE_OPTIONS")?.value, name).toBe(nodeOptionsOf(name));
    }
  });

  it("starts each service with its own allocator settings, as libs/rpc/mesh.ts MALLOC_ENV says, and no other", () => {
    for (const name of SERVICE_NAMES) {
      const main = deployment(overlay, name).spec.template.spec.containers.find((c) => c.args?.[0] === name);
      const set = Object.fromEntries((main!.env ?? []).filter((e) => e.name.startsWith("MALLOC_")).map((e) => [e.name, e.value]));
      expect(set, name).toEqual(mallocEnvOf(name));
    }
  });

  it("runs every container non-root, read-only, without capabilities, under RuntimeDefault seccomp, with limits", () => {
    for (const w of [...of<Workload>(overlay, "Deployment"), ...of<Workload>(overlay, "StatefulSet")]) {
      const pod = w.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot, w.metadata.name).toBe(true);
      expect(pod.securityContext?.seccompProfile?.type, w.metadata.name).toBe("RuntimeDefault");
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const where = `${w.metadata.name}/${c.name}`;
        expect(c.securityContext?.runAsNonRoot, where).toBe(true);
        expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(true);
        expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext?.capabilities?.drop, where).toEqual(["ALL"]);
        expect(c.resources?.requests?.memory, where).toBeDefined();
        expect(c.resources?.limits?.memory, where).toBeDefined();
      }
    }
  });

  it("gives the mesh services a writable /tmp and nothing else but their volumes", () => {
    for (const name of SERVICE_NAMES) {
      const pod = deployment(overlay, name).spec.template.spec;
      const tmp = pod.containers[0]!.volumeMounts!.find((m) => m.mountPath === "/tmp")!;
      expect(pod.volumes!.find((v) => v.name === tmp.name)?.emptyDir, name).toBeDefined();
    }
  });

  it("takes the master key and the DB/NATS URLs from Secrets, never from a ConfigMap", () => {
    const vault = deployment(overlay, "vault").spec.template.spec.containers[0]!;
    expect(vault.env!.find((e) => e.name === "NFSE_MASTER_KEY_FILE")?.value).toMatch(/^\/run\/secrets\//);
    for (const [name, variable] of [
      ["store", "MYSQL_URL"],
      ["vault", "MYSQL_URL"],
      ["coordinator", "NATS_URL"],
      ["billing", "NATS_URL"],
    ] as const) {
      const c = deployment(overlay, name).spec.template.spec.containers[0]!;
      expect(c.env!.find((e) => e.name === variable)?.valueFrom?.secretKeyRef?.name, `${name} ${variable}`).toMatch(/^malha-/);
    }
    for (const cm of of<K8sObject & { data?: Record<string, string> }>(overlay, "ConfigMap")) {
      for (const key of Object.keys(cm.data ?? {}))
        expect(key, cm.metadata.name).not.toMatch(/SECRET|MASTER_KEY|PASSWORD|MYSQL_URL|NATS_URL/);
    }
  });

  it("denies all traffic by default and lets only the gateway (the ADN) and billing (webhooks) reach the internet, on 443 to public addresses", () => {
    const policies = of<Policy>(overlay, "NetworkPolicy");
    const denyAll = policies.find(
      (p) => Object.keys(p.spec.podSelector.matchLabels ?? {}).length === 0 && !p.spec.ingress && !p.spec.egress,
    );
    expect(denyAll?.spec.policyTypes?.sort()).toEqual(["Egress", "Ingress"]);
    // Any address-based rule but the one to the overlay's MySQL hosts is a rule to the internet.
    const internet = (r: NonNullable<Policy["spec"]["egress"]>[number]) =>
      (r.to ?? []).some((t) => t.ipBlock) && !(r.ports ?? []).some((x) => x.port === 3306);
    const withIpBlock = policies.filter((p) => (p.spec.egress ?? []).some(internet));
    expect(withIpBlock.map((p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"]).sort()).toEqual(["adn-gateway", "billing"]);
    for (const p of withIpBlock) {
      for (const rule of (p.spec.egress ?? []).filter(internet)) {
        expect(rule.ports).toEqual([{ protocol: "TCP", port: 443 }]);
        const except = (rule.to![0]!.ipBlock as { except?: string[] }).except ?? [];
        for (const cidr of ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"]) expect(except).toContain(cidr);
      }
    }
  });

  it("names the peers of every egress rule: MySQL and NATS only where they are, no port open to any address", () => {
    const policies = of<Policy>(overlay, "NetworkPolicy");
    const selected = (p: Policy) =>
      p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] ??
      p.spec.podSelector.matchExpressions?.find((e) => e.key === "app.kubernetes.io/name" && e.operator === "In")?.values ??
      [];
    for (const p of policies) {
      for (const rule of p.spec.egress ?? [])
        expect(rule.to?.length, `${p.metadata.name}: an egress rule without \`to\``).toBeGreaterThan(0);
    }
    const rulesTo = (port: number) =>
      policies.flatMap((p) =>
        (p.spec.egress ?? []).filter((r) => (r.ports ?? []).some((x) => x.port === port)).map((r) => ({ policy: p, rule: r })),
      );
    for (const [port, peers, clients] of [
      [3306, DATA_PEERS[overlay].mysql, ["artifacts", "billing", "danfse", "store", "vault"]],
      [4222, DATA_PEERS[overlay].nats, ["billing", "coordinator"]],
    ] as const) {
      const rules = rulesTo(port);
      expect(
        rules.map((r) => r.rule.to),
        `egress to ${port}`,
      ).toEqual([peers]);
      expect(
        rules.map((r) => r.rule.ports),
        `egress to ${port}`,
      ).toEqual([[{ protocol: "TCP", port }]]);
      expect([selected(rules[0]!.policy)].flat().sort(), `who reaches ${port}`).toEqual(clients);
    }
  });

  it("admits to the vault only the gateway (credentials), the coordinator (certificate listing) and the console (listing, import)", () => {
    const vault = of<Policy>(overlay, "NetworkPolicy").filter(
      (p) => p.spec.podSelector.matchLabels?.["app.kubernetes.io/name"] === "vault",
    );
    expect(vault).toHaveLength(1);
    const sources = vault[0]!.spec.ingress!.flatMap((r) => r.from ?? []);
    expect(sources.every((s) => s.namespaceSelector === undefined && s.ipBlock === undefined)).toBe(true);
    expect(sources.map((s) => s.podSelector?.matchLabels?.["app.kubernetes.io/name"]).sort()).toEqual([
      "adn-gateway",
      "console",
      "coordinator",
    ]);
  });
});

describe("overlay differences", () => {
  it("every ConfigMap key is a variable the service it configures reads (no typo goes unnoticed)", () => {
    for (const overlay of OVERLAYS) {
      for (const cm of of<K8sObject & { data?: Record<string, string> }>(overlay, "ConfigMap")) {
        const service = SERVICE_NAMES.find((s) => cm.metadata.name.startsWith(`${s}-config`));
        const known = new Set([...runtimeVariables(), ...(service ? serviceVariables(service) : [])]);
        for (const key of Object.keys(cm.data ?? {})) expect(known.has(key), `${overlay} ${cm.metadata.name} ${key}`).toBe(true);
      }
    }
  });

  it("prod keeps leases and work queues on three JetStream replicas (its NATS is an R3 cluster); dev on one", () => {
    const replicasOf = (overlay: string, name: string) =>
      of<K8sObject & { data?: Record<string, string> }>(overlay, "ConfigMap").find((c) => c.metadata.name.startsWith(`${name}-config`))
        ?.data?.NATS_REPLICAS;
    expect(["coordinator", "billing"].map((s) => replicasOf("prod", s))).toEqual(["3", "3"]);
    expect(["coordinator", "billing"].map((s) => replicasOf("dev", s))).toEqual(["1", "1"]);
  });

  it("the schema validation catches a wrongly typed field and an object it has no schema for", async () => {
    const broken = structuredClone(deployment("prod", "store")) as Workload;
    (broken.spec as Record<string, unknown>).replicas = "two";
    expect((await validateAll([broken])).join("\n")).toMatch(/Deployment\/store: .*replicas/);
    expect(await validateAll([{ apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "x" } }])).toEqual([
      "CronJob/x: no schema for batch/v1 CronJob",
    ]);
  });

  it("dev generates placeholder Secrets; prod generates none and runs two replicas of the stateless services", () => {
    const devSecrets = of("dev", "Secret").map((s) => s.metadata.name.replace(/-[a-z0-9]{10}$/, ""));
    expect(devSecrets).toEqual(
      expect.arrayContaining([
        "malha-mysql",
        "malha-nats",
        "malha-master-key",
        "malha-vault-credentials",
        "malha-vault-admin",
        "malha-billing-tokens",
      ]),
    );
    expect(of("prod", "Secret")).toEqual([]);
    for (const name of ["vault", "store", "coordinator", "adn-gateway", "billing"])
      expect(deployment("prod", name).spec.replicas, name).toBe(2);
  });
});

describe("deploy/k8s/README.md", () => {
  it("says what the prod overlay does: lease and queue replicas through NATS_REPLICAS, MySQL and NATS egress by peer", () => {
    const guide = readFileSync(join(ROOT, "deploy/k8s/README.md"), "utf8").replace(/\s+/g, " ");
    expect(guide).not.toMatch(/until that is configurable/);
    expect(guide).toMatch(/`NATS_REPLICAS` sets the replicas of what the services create: the coordinator's lease bucket/);
    expect(guide).toContain("198.51.100.0/24");
    expect(guide).not.toMatch(/kubernetes-client` 1\.20 cannot|apt-get install kubernetes-client/);
  });
});

describe("requireKubectl", () => {
  it("refuses a kubectl older than 1.27 (Debian's kubernetes-client) and does not recommend it", () => {
    const bin = mkdtempSync(join(tmpdir(), "malha-kubectl-"));
    try {
      // What Debian 12's kubernetes-client package answers.
      writeFileSync(join(bin, "kubectl"), `#!/bin/sh\necho '{"clientVersion":{"major":"1","minor":"20","gitVersion":"v1.20.2"}}'\n`);
      chmodSync(join(bin, "kubectl"), 0o755);
      let message = "";
      try {
        requireKubectl({ ...process.env, PATH: `${bin}:${process.env.PATH}` });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/kubectl 1\.20 is too old: install kubectl >= 1\.27/);
      expect(message).not.toMatch(/apt-get install kubernetes-client/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
    expect(kubectlVersionOf('{"clientVersion":{"major":"1","minor":"32+"}}')).toEqual({ major: 1, minor: 32 });
    expect(kubectlVersionOf("not json")).toBeUndefined();
  });
});
