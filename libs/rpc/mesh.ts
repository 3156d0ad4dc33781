/**
 * The services of the mesh and their documented default ports. Each has a gRPC port (gRPC, gRPC-Web and
 * Connect on one listener; the console serves only health there) and a Prometheus metrics port.
 */
export const MESH = {
  vault: { port: 50051, metricsPort: 9101 },
  "adn-gateway": { port: 50052, metricsPort: 9102 },
  store: { port: 50053, metricsPort: 9103 },
  artifacts: { port: 50054, metricsPort: 9104 },
  coordinator: { port: 50055, metricsPort: 9105 },
  billing: { port: 50056, metricsPort: 9106 },
  console: { port: 50057, metricsPort: 9107 },
  danfse: { port: 50058, metricsPort: 9108 },
} as const;

export type MeshServiceName = keyof typeof MESH;

/**
 * V8 flags a service is started with, in every way it is run (systemd `Environment=NODE_OPTIONS`, the
 * Kubernetes Deployment and compose service env, `npm start`, the test and bench harness), each checked
 * against this table. danfse: a 2 MB young generation on the main thread, whose exports pass every PDF's
 * bytes through a few short-lived buffers; with V8's default (16 MB semi-spaces) those buffers pile up
 * between collections and the process passes 256 MB in long exports (decision 0019). store, adn-gateway,
 * coordinator: an explicit old-generation size, so that a container's memory limit does not choose it
 * (decision 0041): under a 384–512 MiB limit Node sizes the heap at 259 MB, where V8 grows it by only
 * 1.3× per collection — ≈ 20 % more CPU per document in the store and the gateway; at 2,048 MB it grows
 * as on a host without limits. The coordinator keeps the small heap (its RSS in a fleet sweep).
 */
export const NODE_FLAGS: Partial<Record<MeshServiceName, readonly string[]>> = {
  store: ["--max-old-space-size=2048"],
  "adn-gateway": ["--max-old-space-size=2048"],
  coordinator: ["--max-old-space-size=256"],
  danfse: ["--max-semi-space-size=2"],
};

/** The NODE_OPTIONS value a service's deployments set, or undefined when it runs with V8's defaults. */
export function nodeOptionsOf(name: MeshServiceName): string | undefined {
  return NODE_FLAGS[name]?.join(" ");
}

/**
 * glibc's allocator settings a service is started with, wherever it runs (the same places as NODE_FLAGS,
 * checked by the same tests). The store allocates a few hundred KB outside the V8 heap for every statement
 * it sends and every request it reads; with glibc's adaptive thresholds those blocks came from its heaps
 * after the first few were freed, and the heaps kept what they had once held. A fixed mmap threshold sends
 * each such block back to the system when it is freed (decision 0056). Ignored by other C libraries.
 */
export const MALLOC_ENV: Partial<Record<MeshServiceName, Readonly<Record<string, string>>>> = {
  store: { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" },
};

/** The allocator variables a service's deployments set (none for most). */
export function mallocEnvOf(name: MeshServiceName): Readonly<Record<string, string>> {
  return MALLOC_ENV[name] ?? {};
}

/** `adn-gateway` → `ADN_GATEWAY_URL`: where a peer is reached, overridable per deployment. */
export function peerUrlVariable(name: MeshServiceName): string {
  return `${name.toUpperCase().replace(/-/g, "_")}_URL`;
}
