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

/** `adn-gateway` → `ADN_GATEWAY_URL`: where a peer is reached, overridable per deployment. */
export function peerUrlVariable(name: MeshServiceName): string {
  return `${name.toUpperCase().replace(/-/g, "_")}_URL`;
}
