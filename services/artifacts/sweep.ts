// Retention: deletes the content of expired artifacts and records it on their rows (kept for audit),
// removes temp files of uploads whose process died, and (less often) blobs without a row: an upload killed
// between publishing its blob and inserting its row, or one whose insert's outcome was unknown and had not
// been committed (put.ts keeps the blob then, since the row may exist). Every step is idempotent, so replicas sharing the
// volume and the database may sweep at the same time. The volume must belong to this database alone: a
// blob whose row lives in another database looks exactly like an orphan.
import type { Logger } from "../../libs/log/logger.js";
import type { ArtifactMetadataStore } from "./metadata.js";
import { ARTIFACT_ID } from "./names.js";
import type { BlobStore } from "./storage/blob-store.js";

export interface SweepDeps {
  meta: ArtifactMetadataStore;
  blobs: BlobStore;
  staleTempMs: number;
  /** Rows fetched per round; a sweep loops until a round comes back short. */
  batchSize?: number;
  now?: () => Date;
}

export interface SweepResult {
  /** Expired artifacts whose content this sweep deleted (or found already gone) and marked. */
  swept: number;
  /** Stale temp files removed. */
  temps: number;
  /** Blobs without a row removed (only when the orphan scan ran). */
  orphans: number;
}

/**
 * Deletes blobs older than `staleTempMs` that no row names. A row is inserted right after its blob is
 * published, so a blob that old without one belongs to an upload that died in between.
 */
export async function sweepOrphans(deps: SweepDeps): Promise<number> {
  const batchSize = deps.batchSize ?? 500;
  let removed = 0;
  let batch: { key: string; id: string }[] = [];
  const flush = async () => {
    const known = await deps.meta.existingIds(batch.map((b) => b.id));
    for (const b of batch) if (!known.has(b.id) && (await deps.blobs.delete(b.key))) removed++;
    batch = [];
  };
  for await (const key of deps.blobs.listKeys(deps.staleTempMs)) {
    const id = key.slice(key.lastIndexOf("/") + 1);
    // Not an id we issue: not ours to judge.
    if (!ARTIFACT_ID.test(id)) continue;
    batch.push({ key, id });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return removed;
}

export async function sweepOnce(deps: SweepDeps, opts: { orphans?: boolean } = {}): Promise<SweepResult> {
  const clock = deps.now ?? (() => new Date());
  const batch = deps.batchSize ?? 500;
  let swept = 0;
  for (;;) {
    const due = await deps.meta.dueForSweep(clock(), batch);
    for (const record of due) {
      // Content first, row second: a crash in between leaves a row the next sweep retries.
      await deps.blobs.delete(record.storageKey);
      if (await deps.meta.markSwept(record.id, clock())) swept++;
    }
    if (due.length < batch) break;
  }
  const temps = await deps.blobs.sweepTemps(deps.staleTempMs);
  const orphans = opts.orphans ? await sweepOrphans(deps) : 0;
  return { swept, temps, orphans };
}

export interface Sweeper {
  stop(): Promise<void>;
}

/**
 * Runs sweepOnce every `intervalMs`, with the orphan scan (a walk of every stored key) on the first run
 * and then every `orphanScanMs`; never two at once in this process; failures are logged and retried.
 */
export function startSweeper(deps: SweepDeps, intervalMs: number, orphanScanMs: number, log: Logger): Sweeper {
  let running: Promise<void> | undefined;
  let stopped = false;
  let lastOrphanScan = Number.NEGATIVE_INFINITY;
  const tick = () => {
    if (running || stopped) return;
    const orphans = Date.now() - lastOrphanScan >= orphanScanMs;
    running = sweepOnce(deps, { orphans })
      .then(
        (r) => {
          if (orphans) lastOrphanScan = Date.now();
          if (r.swept > 0 || r.temps > 0 || r.orphans > 0) log.info(r, "retention sweep");
        },
        (err: unknown) => log.error({ err }, "retention sweep failed"),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
