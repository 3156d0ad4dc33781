// The artifacts service's own Prometheus series, beside the RPC ones: how much content crosses its
// gRPC port, so a client's traffic (billing writing PDFs, reading them back) can be measured.
import { Counter, type Registry } from "prom-client";

export interface ArtifactsMetrics {
  /** Content bytes by method and direction ("received" in uploads and inline entries, "sent" in downloads). */
  contentBytes: Counter<"method" | "direction">;
}

export function createArtifactsMetrics(registry: Registry): ArtifactsMetrics {
  return {
    contentBytes: new Counter({
      name: "malha_artifacts_content_bytes_total",
      help: "Artifact content bytes received (uploads, inline zip entries) and sent (downloads) over gRPC, by method",
      labelNames: ["method", "direction"],
      registers: [registry],
    }),
  };
}
