// The consolidated artifacts of a finished round, for every kind: manifest.json (the kind's document),
// errors.json (failed and skipped items with their codes) and a zip with every unit's artifact and both
// JSON files. The zip is composed by the artifacts service from the stored blobs, so no unit's bytes
// come back to billing. Everything is a function of the stored rows, so a finalize repeated after a
// crash produces the same bytes under the same immutable names.
import { ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ArtifactStore } from "./artifacts-client.js";
import type { ItemRepo, ItemRow } from "./item-repo.js";
import type { JobRow } from "./job-repo.js";
import type { StoredArtifact, StoredManifest } from "./stored.js";

export async function allItems(items: ItemRepo, jobId: string): Promise<ItemRow[]> {
  const out: ItemRow[] = [];
  for (;;) {
    const page = await items.page(jobId, { afterPosition: out.at(-1)?.position ?? 0, limit: 500 });
    out.push(...page);
    if (page.length < 500) return out;
  }
}

export const stateName = (s: ItemState) => ItemState[s] ?? String(s);

export function errorsDocument(rows: readonly ItemRow[]) {
  return {
    items: rows
      .filter((r) => r.state === ItemState.FAILED || r.state === ItemState.SKIPPED)
      .map((r) => ({ item_id: r.itemId, position: r.position, state: stateName(r.state), errors: r.errors })),
  };
}

const jsonBytes = (doc: object) => Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, "utf8");

/**
 * Stores the round's manifest.json and errors.json and, when the round produced anything, `zipName`
 * holding `entries` (in order) followed by both documents.
 */
export async function publishRound(p: {
  job: JobRow;
  artifacts: ArtifactStore;
  expiresAt: Date;
  manifest: object;
  errors: object;
  zipName: string;
  entries: readonly StoredArtifact[];
}): Promise<StoredManifest> {
  const { job, artifacts, expiresAt } = p;
  // Round 0 keeps the plain names; a retry round gets its own (names are immutable).
  const dir = job.retryRounds === 0 ? "" : `rounds/${job.retryRounds}/`;
  const put = (name: string, contentType: string, data: Uint8Array) =>
    artifacts.put({ tenant: job.tenant, jobId: job.id, name: `${dir}${name}`, contentType, data, expiresAt });
  const manifestBytes = jsonBytes(p.manifest);
  const errorsBytes = jsonBytes(p.errors);
  const manifestJson = await put("manifest.json", "application/json", manifestBytes);
  const errorsJson = await put("errors.json", "application/json", errorsBytes);
  if (p.entries.length === 0) return { manifestJson, errorsJson };
  const zip = await artifacts.composeZip({
    tenant: job.tenant,
    jobId: job.id,
    name: `${dir}${p.zipName}`,
    entries: [
      ...p.entries.map((a) => ({ name: a.name, artifactId: a.artifactId })),
      { name: "manifest.json", data: manifestBytes },
      { name: "errors.json", data: errorsBytes },
    ],
    expiresAt,
  });
  return { manifestJson, errorsJson, zip };
}
