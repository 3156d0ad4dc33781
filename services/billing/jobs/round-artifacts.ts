// The consolidated artifacts of a finished round: manifest.json (status, hashes and sizes per item plus
// the job metadata), errors.json (failed and skipped items with their codes) and a zip with every PDF
// and both JSON files. Everything is a function of the items, so a finalize repeated after a crash
// produces the same bytes under the same immutable names.
import { ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ArtifactStore } from "./artifacts-client.js";
import type { ItemRepo, ItemRow } from "./item-repo.js";
import type { JobRow, StoredManifest } from "./job-repo.js";
import { buildZip, type ZipEntry } from "./zip.js";

export async function allItems(items: ItemRepo, jobId: string): Promise<ItemRow[]> {
  const out: ItemRow[] = [];
  for (;;) {
    const page = await items.page(jobId, { afterPosition: out.at(-1)?.position ?? 0, limit: 500 });
    out.push(...page);
    if (page.length < 500) return out;
  }
}

export const stateName = (s: ItemState) => ItemState[s] ?? String(s);

export function manifestDocument(job: JobRow, rows: readonly ItemRow[]) {
  return {
    job_id: job.id,
    tenant: job.tenant,
    metadata: job.metadata,
    retry_round: job.retryRounds,
    items: rows.map((r) => ({
      item_id: r.itemId,
      position: r.position,
      state: stateName(r.state),
      ...(r.state === ItemState.COMPLETED && r.result?.pdf
        ? {
            pdf: { name: r.result.pdf.name, sha256: r.result.pdf.sha256, size_bytes: r.result.pdf.sizeBytes },
            linha_digitavel: r.result.linhaDigitavel,
            nosso_numero: r.result.nossoNumeroFormatado,
          }
        : {}),
      ...(r.errors.length > 0 && r.state !== ItemState.COMPLETED ? { error_codes: r.errors.map((e) => e.code) } : {}),
    })),
  };
}

export function errorsDocument(rows: readonly ItemRow[]) {
  return {
    items: rows
      .filter((r) => r.state === ItemState.FAILED || r.state === ItemState.SKIPPED)
      .map((r) => ({ item_id: r.itemId, position: r.position, state: stateName(r.state), errors: r.errors })),
  };
}

export async function buildJobArtifacts(p: {
  job: JobRow;
  items: ItemRepo;
  artifacts: ArtifactStore;
  expiresAt: Date;
}): Promise<StoredManifest> {
  const { job, artifacts, expiresAt } = p;
  const rows = await allItems(p.items, job.id);
  const manifestBytes = Buffer.from(`${JSON.stringify(manifestDocument(job, rows), null, 2)}\n`, "utf8");
  const errorsBytes = Buffer.from(`${JSON.stringify(errorsDocument(rows), null, 2)}\n`, "utf8");
  // Round 0 keeps the plain names; a RetryFailedItems round gets its own (names are immutable).
  const dir = job.retryRounds === 0 ? "" : `rounds/${job.retryRounds}/`;
  const put = (name: string, contentType: string, data: Uint8Array) =>
    artifacts.put({ tenant: job.tenant, jobId: job.id, name: `${dir}${name}`, contentType, data, expiresAt });
  const entries: ZipEntry[] = [];
  for (const r of rows) {
    if (r.state !== ItemState.COMPLETED || !r.result?.pdf) continue;
    entries.push({ name: r.result.pdf.name, data: await artifacts.read(job.tenant, r.result.pdf.artifactId) });
  }
  const manifestJson = await put("manifest.json", "application/json", manifestBytes);
  const errorsJson = await put("errors.json", "application/json", errorsBytes);
  let zip;
  if (entries.length > 0) {
    entries.push({ name: "manifest.json", data: manifestBytes }, { name: "errors.json", data: errorsBytes });
    zip = await put(`boletos-${job.id}.zip`, "application/zip", buildZip(entries));
  }
  return { manifestJson, errorsJson, ...(zip ? { zip } : {}) };
}
