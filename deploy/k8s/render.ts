// Renders a kustomization with `kubectl kustomize` (offline) and validates every object against the
// Kubernetes schemas of kubernetes-models. kubectl is not an npm package: without it this fails loudly.
import { execFileSync } from "node:child_process";
import { parseAllDocuments } from "yaml";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** The oldest kubectl whose embedded kustomize renders our kustomizations (components, `labels:`). */
export const MIN_KUBECTL = { major: 1, minor: 27 } as const;

const INSTALL_HINT =
  "install kubectl >= 1.27 (the upstream binary or the Kubernetes project's package repository; Debian's " +
  "`kubernetes-client` package is kubectl 1.20, too old to render these kustomizations) and re-run";

/** Parses `kubectl version --client -o json`; undefined when it says nothing usable. */
export function kubectlVersionOf(json: string): { major: number; minor: number } | undefined {
  try {
    const v = (JSON.parse(json) as { clientVersion?: { major?: string; minor?: string } }).clientVersion;
    const major = Number.parseInt(v?.major ?? "", 10);
    // Some builds report minor as "32+".
    const minor = Number.parseInt(v?.minor ?? "", 10);
    return Number.isNaN(major) || Number.isNaN(minor) ? undefined : { major, minor };
  } catch {
    return undefined;
  }
}

export function requireKubectl(env: NodeJS.ProcessEnv = process.env): void {
  let out: string;
  try {
    out = execFileSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env });
  } catch {
    throw new Error(`kubectl is required to render the kustomizations (\`kubectl kustomize\` works offline): ${INSTALL_HINT}`);
  }
  const v = kubectlVersionOf(out);
  if (!v || v.major < MIN_KUBECTL.major || (v.major === MIN_KUBECTL.major && v.minor < MIN_KUBECTL.minor)) {
    throw new Error(`kubectl ${v ? `${v.major}.${v.minor}` : "(unknown version)"} is too old: ${INSTALL_HINT}`);
  }
}

export function render(dir: string): K8sObject[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

type Validatable = new (data: object) => { validate(): void };

// The API groups the manifests use; a new group must be added here (validateAll reports it otherwise).
const GROUPS: Record<string, () => Promise<object>> = {
  v1: () => import("kubernetes-models/v1"),
  "apps/v1": () => import("kubernetes-models/apps/v1"),
  "policy/v1": () => import("kubernetes-models/policy/v1"),
  "networking.k8s.io/v1": () => import("kubernetes-models/networking.k8s.io/v1"),
  // Prometheus Operator CRDs (components/monitoring).
  "monitoring.coreos.com/v1": () => import("@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"),
};

async function modelOf(apiVersion: string, kind: string): Promise<Validatable | undefined> {
  const load = GROUPS[apiVersion];
  if (!load) return undefined;
  return ((await load()) as Record<string, unknown>)[kind] as Validatable | undefined;
}

/** One line per invalid object; an object whose kind kubernetes-models does not know is an error too. */
export async function validateAll(objects: readonly K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const obj of objects) {
    const where = `${obj.kind}/${obj.metadata.name}`;
    const Model = await modelOf(obj.apiVersion, obj.kind);
    if (!Model) {
      problems.push(`${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
      continue;
    }
    try {
      new Model(unfoldSecretData(obj)).validate();
    } catch (err) {
      problems.push(`${where}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * kustomize folds long base64 Secret values over several lines; the API server's decoder (Go's base64)
 * skips the newlines, the schema's `byte` format does not, so compare what the server would decode.
 */
function unfoldSecretData(obj: K8sObject): K8sObject {
  if (obj.kind !== "Secret" || typeof obj.data !== "object" || obj.data === null) return obj;
  const data = Object.fromEntries(Object.entries(obj.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, "")]));
  return { ...obj, data };
}
