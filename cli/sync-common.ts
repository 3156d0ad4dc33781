// What the sync commands share: feed filters and names, decision and run rows, poll pacing.
import { SkipReason, type FeedDecision } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunOutcome, SyncPool, type Run } from "../libs/gen/malha/store/v1/types_pb.js";
import { str, type Context } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { enumName, iso, json, parseEnum } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

export const feedOptions = { ambiente: { type: "string" }, "tipo-nsu": { type: "string" } } as const;

export function feedFilter(ctx: Context): { ambiente?: Ambiente; tipoNsu?: TipoNsu } {
  try {
    const a = str(ctx.values, "ambiente");
    const t = str(ctx.values, "tipo-nsu");
    return {
      ...(a ? { ambiente: parseEnum(Ambiente, a, "--ambiente") } : {}),
      ...(t ? { tipoNsu: parseEnum(TipoNsu, t, "--tipo-nsu") } : {}),
    };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export const feedName = (f: { ibge: string; ambiente: Ambiente; tipoNsu: TipoNsu } | undefined) =>
  f ? `${f.ibge}/${enumName(Ambiente, f.ambiente).toLowerCase()}/${enumName(TipoNsu, f.tipoNsu).toLowerCase()}` : "-";

export function printDecisions(ctx: Context, decisions: FeedDecision[], extra: Record<string, unknown> = {}): void {
  const rows = decisions.map((d) => ({
    feed: feedName(d.feed),
    accepted: d.accepted,
    reason: d.accepted ? null : enumName(SkipReason, d.reason),
    pool: enumName(SyncPool, d.pool),
    notBefore: iso(d.notBefore),
    leaseHolder: d.leaseHolder || null,
  }));
  if (ctx.json) return write(ctx.io.out, json({ ...extra, decisions: rows }));
  ctx.io.out.write(
    table(
      ["feed", "decision", "pool", "not before", "lease holder"],
      rows.map((r) => [
        r.feed,
        r.accepted ? "queued" : `skipped: ${(r.reason ?? "").toLowerCase()}`,
        r.pool.toLowerCase(),
        r.notBefore ?? "-",
        r.leaseHolder ?? "-",
      ]),
    ),
  );
}

/** --interval / --timeout as a poll budget: counted in refreshes, so a slow machine cannot cut a wait short. */
export function pacing(ctx: Context): { intervalMs: number; maxPolls: number } {
  const intervalMs = Number(str(ctx.values, "interval") ?? "2") * 1000;
  const timeoutS = str(ctx.values, "timeout");
  if (!(intervalMs > 0)) throw new UsageError("--interval must be a positive number of seconds");
  if (timeoutS !== undefined && !(Number(timeoutS) > 0)) throw new UsageError("--timeout must be a positive number of seconds");
  return { intervalMs, maxPolls: timeoutS !== undefined ? Math.max(1, Math.ceil((Number(timeoutS) * 1000) / intervalMs)) : Infinity };
}

export function runRow(r: Run) {
  return {
    runId: r.runId,
    feed: feedName(r.feed),
    pool: enumName(SyncPool, r.pool),
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    startCursor: r.startCursor,
    endCursor: r.endCursor,
    documentsInserted: r.documentsInserted,
    eventsInserted: r.eventsInserted,
    faults: r.faults,
    outcome: r.finishedAt ? enumName(RunOutcome, r.outcome) : "RUNNING",
    error: r.errorMessage || null,
  };
}
