// The opt-in monitoring component (PodMonitor + PrometheusRule): it renders onto the base and validates
// against the Prometheus Operator's schemas, scrapes every service's metrics port, and every alert is
// valid PromQL over series and labels the services really export (a renamed metric breaks this test,
// not the pager).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { parser } from "@prometheus-io/lezer-promql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, SERVICE_NAMES, serviceVariables } from "../../docker/config-vars.js";
import { render, requireKubectl, validateAll, type K8sObject } from "./render.js";

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface PrometheusRule extends K8sObject {
  spec: { groups: { name: string; rules: Rule[] }[] };
}
interface PodMonitor extends K8sObject {
  spec: { jobLabel: string; selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: { port: string }[] };
}
interface Deployment extends K8sObject {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports?: { name: string }[] }[] } } };
}

const K8S = join(ROOT, "deploy/k8s");
let objects: K8sObject[] = [];
let overlay = "";
beforeAll(() => {
  requireKubectl();
  // kustomize takes only relative paths: a throwaway overlay beside the real ones.
  overlay = mkdtempSync(join(K8S, ".monitoring-test-"));
  writeFileSync(
    join(overlay, "kustomization.yaml"),
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: malha\nresources: [../base]\ncomponents: [../components/monitoring]\n",
  );
  objects = render(overlay);
});
afterAll(() => {
  if (overlay) rmSync(overlay, { recursive: true, force: true });
});

const one = <T extends K8sObject>(kind: string) => objects.find((o) => o.kind === kind) as T;
const rules = () => one<PrometheusRule>("PrometheusRule").spec.groups.flatMap((g) => g.rules);

/** Every series the code registers (prom-client `name:`), with its `labelNames`. */
function registeredSeries(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return f === "gen" || f === "node_modules" ? [] : walk(p);
      return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
    });
  for (const file of [...walk(join(ROOT, "services")), ...walk(join(ROOT, "libs"))]) {
    const text = readFileSync(file, "utf8");
    // Each constructor call, up to the next one: its name, its labelNames, and whether it is a histogram.
    const calls = [...text.matchAll(/new (Counter|Gauge|Histogram|Summary)\(\{/g)];
    calls.forEach((c, i) => {
      const body = text.slice(c.index!, calls[i + 1]?.index);
      const name = /name: "(malha_[a-z0-9_]+)"/.exec(body)?.[1];
      if (!name) return;
      const labels = new Set([...(/labelNames: \[([^\]]*)\]/.exec(body)?.[1]?.matchAll(/"([a-z_]+)"/g) ?? [])].map((l) => l[1]!));
      const suffixes = c[1] === "Histogram" ? ["_bucket", "_sum", "_count"] : c[1] === "Summary" ? ["", "_sum", "_count"] : [""];
      for (const s of suffixes) out.set(name + s, s === "_bucket" ? new Set([...labels, "le"]) : labels);
    });
  }
  return out;
}

// Labels Prometheus or the registry adds to every series.
const COMMON_LABELS = new Set(["job", "pod", "namespace", "instance", "container", "malha_service"]);

/** Valid PromQL, and every selector names a series some service exports, with labels it has. */
function checkExpr(where: string, expr: string, series: Map<string, Set<string>>): void {
  parser.parse(expr).iterate({
    enter: (n) => {
      expect(n.type.isError, `${where}: syntax error at ${n.from} in ${expr}`).toBe(false);
      if (n.type.name !== "VectorSelector") return;
      const text = expr.slice(n.from, n.to);
      const metric = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(text)?.[0] ?? "";
      if (metric === "up") return;
      expect(series.has(metric), `${where}: ${metric} is not exported by any service`).toBe(true);
      for (const l of text.matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)\s*"/g)) {
        expect(series.get(metric)!.has(l[1]!) || COMMON_LABELS.has(l[1]!), `${where}: ${metric} has no label ${l[1]}`).toBe(true);
      }
    },
  });
}

interface Dashboard {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string }[] };
  panels: { id: number; title: string; datasource?: { uid: string }; targets: { expr: string; datasource?: { uid: string } }[] }[];
}

describe("monitoring component", () => {
  it("renders onto the base and validates against the Prometheus Operator schemas", async () => {
    expect(
      objects
        .filter((o) => o.apiVersion.startsWith("monitoring.coreos.com"))
        .map((o) => o.kind)
        .sort(),
    ).toEqual(["PodMonitor", "PrometheusRule"]);
    expect(await validateAll(objects)).toEqual([]);
  });

  it("scrapes the metrics port of every service's pods, named by the service", () => {
    const pm = one<PodMonitor>("PodMonitor");
    const deployments = objects.filter((o) => o.kind === "Deployment") as Deployment[];
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const d of deployments) {
      const labels = d.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(pm.spec.selector.matchLabels)) expect(labels[k], d.metadata.name).toBe(v);
      expect(labels[pm.spec.jobLabel], d.metadata.name).toBe(d.metadata.name);
      for (const e of pm.spec.podMetricsEndpoints)
        expect(
          d.spec.template.spec.containers[0]!.ports?.map((p) => p.name),
          d.metadata.name,
        ).toContain(e.port);
    }
  });

  it("every alert is valid PromQL over series and labels the services export, with a severity and a summary", () => {
    const series = registeredSeries();
    expect(series.get("malha_sync_runs_total")).toEqual(new Set(["pool", "outcome"]));
    expect(series.has("malha_rpc_duration_seconds_bucket")).toBe(true);
    const names = new Set<string>();
    for (const r of rules()) {
      expect(names.has(r.alert), `${r.alert} twice`).toBe(false);
      names.add(r.alert);
      expect(["warning", "critical"], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      if (r.for !== undefined) expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
      checkExpr(r.alert, r.expr, series);
    }
    // `up` selects the jobs the PodMonitor names: every service and nothing else.
    const down = rules().find((r) => r.alert === "MalhaServiceDown")!;
    expect(/job=~"([^"]+)"/.exec(down.expr)![1]!.split("|").sort()).toEqual([...SERVICE_NAMES].sort());
  });

  it("an alert's advice names only settings a service reads; the 429 one points at the per-certificate ones", () => {
    const read = new Set(SERVICE_NAMES.flatMap((s) => [...serviceVariables(s)]));
    for (const r of rules())
      for (const [, name] of `${r.annotations?.description ?? ""}`.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g))
        expect(read.has(name!), `${r.alert} names ${name}, which no service reads`).toBe(true);
    // The ADN limits each certificate: the pool of runs across municipalities is not what trips it.
    const limited = rules().find((r) => r.alert === "MalhaSyncRateLimited")!.annotations!.description!;
    expect(serviceVariables("adn-gateway").has("ADN_RATE_LIMIT_COOLDOWN_SECONDS")).toBe(true);
    expect(limited).toContain("ADN_RATE_LIMIT_COOLDOWN_SECONDS");
    expect(limited).toContain("per certificate");
    expect(limited).not.toMatch(/lower NFSE_WORKER_CONCURRENCY/);
  });

  it("the rule groups pass `promtool check rules` (the spec.groups are a plain Prometheus rules file)", () => {
    const dir = mkdtempSync(join(tmpdir(), "malha-rules-"));
    try {
      const file = join(dir, "rules.yaml");
      writeFileSync(file, stringify({ groups: one<PrometheusRule>("PrometheusRule").spec.groups }));
      const r = spawnSync("promtool", ["check", "rules", file], { encoding: "utf8" });
      if (r.error)
        throw new Error(`promtool is required (apt-get install prometheus, or bash scripts/stack.sh install): ${r.error.message}`);
      expect({ status: r.status, out: r.stdout + r.stderr }).toMatchObject({
        status: 0,
        out: expect.stringMatching(/SUCCESS: \d+ rules found/),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("provisions the Grafana dashboards (sync fleet, billing jobs) as a ConfigMap Grafana's sidecar loads", () => {
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.labels?.grafana_dashboard === "1") as
      | (K8sObject & { data: Record<string, string> })
      | undefined;
    expect(cm?.metadata.name).toBe("malha-grafana-dashboards");
    expect(Object.keys(cm!.data).sort()).toEqual(["malha-billing.json", "malha-sync.json"]);
    // What the ConfigMap carries is the files of dashboards/, which are importable as they are.
    for (const [file, text] of Object.entries(cm!.data))
      expect(text, file).toBe(readFileSync(join(K8S, "components/monitoring/dashboards", file), "utf8"));
  });

  it("every dashboard panel queries, through the datasource variable, series and labels the services export", () => {
    const series = registeredSeries();
    const cm = objects.find((o) => o.metadata.name === "malha-grafana-dashboards") as K8sObject & { data: Record<string, string> };
    const uids = new Set<string>();
    const queried = new Set<string>();
    for (const [file, text] of Object.entries(cm.data)) {
      const d = JSON.parse(text) as Dashboard;
      expect(uids.has(d.uid), `${file}: uid ${d.uid} twice`).toBe(false);
      uids.add(d.uid);
      expect(d.templating.list.find((v) => v.name === "datasource")?.type, file).toBe("datasource");
      expect(new Set(d.panels.map((p) => p.id)).size, `${file}: panel ids`).toBe(d.panels.length);
      for (const p of d.panels) {
        const where = `${file} "${p.title}"`;
        expect(p.targets.length, where).toBeGreaterThan(0);
        expect(p.datasource?.uid, where).toBe("${datasource}");
        for (const t of p.targets) {
          expect(t.datasource?.uid, where).toBe("${datasource}");
          // Grafana's interval variables are not PromQL: stand in a duration for the parser.
          const expr = t.expr.replaceAll("$__rate_interval", "5m").replaceAll("$__interval", "1m");
          expect(expr, `${where}: unknown template variable`).not.toMatch(/\$/);
          checkExpr(where, expr, series);
          for (const m of expr.matchAll(/malha_[a-z0-9_]+/g)) queried.add(m[0]);
        }
      }
    }
    // The sync fleet and the billing jobs are both on a dashboard.
    for (const metric of [
      "malha_sync_feeds",
      "malha_sync_runs_total",
      "malha_adn_http_requests_total",
      "malha_billing_open_jobs",
      "malha_billing_jobs_finished_total",
      "malha_billing_webhook_attempts_total",
    ]) {
      expect(queried.has(metric), metric).toBe(true);
    }
  });

  it("the checks catch a misspelt metric, an unknown label and broken PromQL", () => {
    const series = registeredSeries();
    expect(series.has("malha_sync_fault")).toBe(false);
    expect(() => checkExpr("t", "sum(rate(malha_sync_fault_total[5m]))", series)).toThrow(/malha_sync_fault_total is not exported/);
    expect(() => checkExpr("t", 'max by (kind) (malha_billing_open_jobs{tenant="x"})', series)).toThrow(/has no label tenant/);
    expect(series.get("malha_billing_jobs_finished_total")?.has("status")).toBe(false);
    let broken = false;
    parser.parse("rate(malha_sync_runs_total[5m) >").iterate({ enter: (n) => void (broken ||= n.type.isError) });
    expect(broken).toBe(true);
  });
});
