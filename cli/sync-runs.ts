import { CoordinatorService } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { str, type Command } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { json } from "./format.js";
import { write } from "./io.js";
import { feedFilter, feedOptions, runRow } from "./sync-common.js";
import { table } from "./table.js";

export const syncRuns: Command = {
  usage: "sync runs [--ibge <ibge>] [--running] [--limit <n>]",
  summary: "recent runs, newest first",
  options: { ...feedOptions, ibge: { type: "string" }, running: { type: "boolean" }, limit: { type: "string" } },
  async run(ctx) {
    const limit = Number(str(ctx.values, "limit") ?? "20");
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit must be an integer between 1 and 500");
    const coordinator = ctx.targets.client("coordinator", CoordinatorService);
    const res = await coordinator.listRuns({
      ibge: str(ctx.values, "ibge") ?? "",
      ...feedFilter(ctx),
      runningOnly: ctx.values.running === true,
      pageSize: limit,
    });
    const rows = res.runs.map(runRow);
    if (ctx.json) return write(ctx.io.out, json(rows));
    ctx.io.out.write(
      table(
        ["run", "feed", "pool", "started", "finished", "nsu", "docs", "events", "faults", "outcome", "error"],
        rows.map((r) => [
          r.runId,
          r.feed,
          r.pool.toLowerCase(),
          r.startedAt ?? "-",
          r.finishedAt ?? "-",
          `${r.startCursor}→${r.endCursor}`,
          String(r.documentsInserted),
          String(r.eventsInserted),
          String(r.faults),
          r.outcome.toLowerCase(),
          (r.error ?? "-").slice(0, 60),
        ]),
      ),
    );
  },
};
