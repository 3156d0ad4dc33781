// Issue #9 acceptance: a 200-boleto job with 17 invalid items ends PARTIALLY_COMPLETED with 183 PDFs
// whose sha256 match the manifest, a zip whose contents match, and errors.json listing the 17 with codes.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetBoletoJobArtifactsResponseSchema, ListBoletoJobItemsResponseSchema } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoInvalido, boletoValido, INVALIDOS } from "./testing/fixtures.js";

let mesh: BillingMesh;
let dir: string;
beforeAll(async () => {
  mesh = await startBillingMesh();
  dir = mkdtempSync(join(tmpdir(), "billing-acc-"));
});
afterAll(async () => {
  await mesh?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

describe("a 200-boleto job with 17 invalid items", () => {
  it("ends PARTIALLY_COMPLETED with 183 PDFs, a matching zip, manifest.json and errors.json", async () => {
    const c = mesh.billingClient();
    const invalid = new Set(Array.from({ length: 17 }, (_, k) => 3 + k * 11)); // positions 3, 14, …, 179
    const items = Array.from({ length: 200 }, (_, i) => (invalid.has(i + 1) ? boletoInvalido(i + 1, i) : boletoValido(i + 1)));
    const created = await c.createBoletoJob({
      tenant: "acc",
      idempotencyKey: "lote-200",
      requestedBy: "op",
      environment: Environment.PRODUCTION,
      items,
    });
    const jobId = created.job!.jobId;
    const t0 = Date.now();
    // 200 items take seconds: right after the create the manifest is not there yet.
    await expect(c.getBoletoJobArtifacts({ tenant: "acc", jobId })).rejects.toMatchObject({ code: Code.FailedPrecondition });
    let job = created.job!;
    while (!FINAL.includes(job.state)) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await c.getBoletoJob({ tenant: "acc", jobId })).job!;
    }
    // Reported by the test run, not asserted: how long the 200 items took on this machine.
    console.log(
      `200-item job: ${Date.now() - t0} ms wall, duracao_ms=${job.metrics?.duracaoMs}, ms_por_item=${job.metrics?.msPorItem.toFixed(1)}`,
    );
    expect(job.state).toBe(JobState.PARTIALLY_COMPLETED);
    expect(job.counters).toMatchObject({ total: 200, completed: 183, failed: 17, skipped: 0 });

    const art = await c.getBoletoJobArtifacts({ tenant: "acc", jobId });
    expect(art.items).toHaveLength(200);
    const done = art.items.filter((i) => i.state === ItemState.COMPLETED);
    expect(done).toHaveLength(183);
    expect(art.items.filter((i) => i.state === ItemState.FAILED).map((i) => i.errorCodes[0])).toEqual(
      [...invalid].sort((a, b) => a - b).map((p) => INVALIDOS[(p - 1) % INVALIDOS.length]!.code),
    );
    expect(art.retentionDays).toBe(7);
    expect(art.expiresAt).toBeDefined();

    // Every PDF downloaded through its signed link hashes to the manifest's sha256.
    for (const it of done) {
      const bytes = Buffer.from(await (await fetch(it.pdf!.downloadUrl)).arrayBuffer());
      expect(bytes.subarray(0, 5).toString()).toBe("%PDF-");
      expect(sha(bytes)).toBe(it.pdf!.sha256);
      expect(BigInt(bytes.length)).toBe(it.pdf!.sizeBytes);
    }

    // The zip: 183 PDFs + manifest.json + errors.json, each matching.
    const zip = Buffer.from(await (await fetch(art.zip!.downloadUrl)).arrayBuffer());
    expect(sha(zip)).toBe(art.zip!.sha256);
    writeFileSync(join(dir, "job.zip"), zip);
    execFileSync("unzip", ["-q", join(dir, "job.zip"), "-d", join(dir, "out")]);
    expect(readdirSync(join(dir, "out", "items")).sort()).toEqual(done.map((i) => `${i.itemId}.pdf`).sort());
    for (const it of done) expect(sha(readFileSync(join(dir, "out", "items", `${it.itemId}.pdf`)))).toBe(it.pdf!.sha256);
    const manifest = JSON.parse(readFileSync(join(dir, "out", "manifest.json"), "utf8"));
    expect(sha(readFileSync(join(dir, "out", "manifest.json")))).toBe(art.manifestJson!.sha256);
    expect(manifest.items).toHaveLength(200);
    for (const it of done) expect(manifest.items.find((m: { item_id: string }) => m.item_id === it.itemId).pdf.sha256).toBe(it.pdf!.sha256);
    expect(manifest.metadata).toMatchObject({
      tenant: "acc",
      requestedBy: "op",
      templateVersion: expect.any(String),
      bankRulesVersion: expect.stringMatching(/^bancos-/),
    });
    const errors = JSON.parse(readFileSync(join(dir, "out", "errors.json"), "utf8"));
    expect(sha(readFileSync(join(dir, "out", "errors.json")))).toBe(art.errorsJson!.sha256);
    expect(errors.items).toHaveLength(17);
    for (const e of errors.items) expect(e.errors[0].code).toMatch(/^[A-Z_]+$/);

    // No base64 (or any file content) in responses: only references.
    const list = await c.listBoletoJobItems({ tenant: "acc", jobId, pageSize: 500 });
    for (const text of [toJsonString(GetBoletoJobArtifactsResponseSchema, art), toJsonString(ListBoletoJobItemsResponseSchema, list)]) {
      expect(text).not.toContain("JVBER"); // base64 of "%PDF"
      expect(text).not.toContain("UEsDB"); // base64 of a zip's local header
    }

    // Another tenant's artifacts: NOT_FOUND on the RPC, and the artifact itself is not theirs either.
    await expect(c.getBoletoJobArtifacts({ tenant: "intruso", jobId })).rejects.toMatchObject({ code: Code.NotFound });
    await expect(mesh.artifactsClient.createDownloadLink({ tenant: "intruso", id: art.zip!.artifactId })).rejects.toMatchObject({
      code: Code.NotFound,
    });
  });
});
