// Each byte crosses once: with two billing processes sharing a 200-boleto job, every PDF goes to the
// artifacts service and none comes back to billing — the zip is composed there (ComposeZip) from the
// stored blobs. Counted on the artifacts side (its content-bytes and RPC series), not by billing itself.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Environment, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { scrape, type Sample } from "../../test/support/prom-text.js";
import { boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
let dir: string;
beforeAll(async () => {
  mesh = await startBillingMesh({ processes: 2 });
  dir = mkdtempSync(join(tmpdir(), "billing-once-"));
});
afterAll(async () => {
  await mesh?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
const total = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

describe("two billing processes, one 200-boleto job", () => {
  it("read no PDF back from artifacts, and the composed zip holds every PDF with the manifest's hashes", async () => {
    const c = mesh.billingClient(mesh.billing[0]);
    const before = await scrape(mesh.artifacts.metricsPort);
    const created = await c.createBoletoJob({
      tenant: "once",
      environment: Environment.SANDBOX,
      items: Array.from({ length: 200 }, (_, i) => boletoValido(i + 1)),
    });
    const jobId = created.job!.jobId;
    let job = created.job!;
    while (!FINAL.includes(job.state)) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await c.getBoletoJob({ tenant: "once", jobId })).job!;
    }
    expect(job.state).toBe(JobState.COMPLETED);

    const after = await scrape(mesh.artifacts.metricsPort);
    const delta = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
    expect(delta("malha_rpc_handled_total", { method: "GetArtifact" })).toBe(0);
    expect(delta("malha_artifacts_content_bytes_total", { direction: "sent" })).toBe(0);
    expect(delta("malha_rpc_handled_total", { method: "ComposeZip", code: "OK" })).toBe(1);
    // Both processes did share the job: otherwise this would say nothing about replicas.
    for (const b of mesh.billing) {
      expect(total(await scrape(b.metricsPort), "malha_billing_items_finished_total", { kind: "boleto" })).toBeGreaterThan(0);
    }

    const art = await c.getBoletoJobArtifacts({ tenant: "once", jobId });
    const zip = Buffer.from(await (await fetch(art.zip!.downloadUrl)).arrayBuffer());
    expect(createHash("sha256").update(zip).digest("hex")).toBe(art.zip!.sha256);
    const pdfBytes = art.items.reduce((n, i) => n + Number(i.pdf?.sizeBytes ?? 0n), 0);
    // The PDFs went up once, with the two small documents (put, then inlined in ComposeZip); billing
    // used to upload the zip it had built as well, all the PDFs a second time.
    const received = delta("malha_artifacts_content_bytes_total", { direction: "received" });
    expect(received).toBeGreaterThanOrEqual(pdfBytes);
    expect(received).toBeLessThan(1.5 * pdfBytes);
    const file = join(dir, "job.zip");
    writeFileSync(file, zip);
    execFileSync("unzip", ["-tq", file]);
    const names = execFileSync("unzip", ["-Z1", file], { encoding: "utf8" }).trim().split("\n");
    expect(names).toEqual([...art.items.map((i) => i.pdf!.name), "manifest.json", "errors.json"]);
  });
});
