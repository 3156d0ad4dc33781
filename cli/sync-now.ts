import { CoordinatorService, SkipReason, type FeedDecision } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { RunOutcome, type Run } from "../libs/gen/malha/store/v1/types_pb.js";
import { str, type Command } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { enumName, json } from "./format.js";
import { write } from "./io.js";
import { feedFilter, feedName, feedOptions, pacing, printDecisions, runRow } from "./sync-common.js";

export const syncNow: Command = {
  usage: "sync now <ibge> [--ambiente <a>] [--tipo-nsu <t>] [--wait [--interval <s>] [--timeout <s>]]",
  summary: "sync a municipality's feeds now (leases, cool-downs and the one-hour rule apply); --wait follows the runs to their end",
  options: { ...feedOptions, wait: { type: "boolean" }, interval: { type: "string" }, timeout: { type: "string" } },
  positionals: [1, 1],
  async run(ctx) {
    const ibge = ctx.positionals[0]!;
    const { intervalMs, maxPolls } = pacing(ctx);
    if (!ctx.values.wait && (str(ctx.values, "interval") || str(ctx.values, "timeout")))
      throw new UsageError("--interval and --timeout go with --wait");
    const coordinator = ctx.targets.client("coordinator", CoordinatorService);
    // Runs that exist before the request: --wait follows only newer ones (no clock comparison needed).
    const before = ctx.values.wait
      ? new Set((await coordinator.listRuns({ ibge, pageSize: 500 })).runs.map((r) => r.runId))
      : new Set<string>();
    const res = await coordinator.syncNow({ ibge, ...feedFilter(ctx), requestedBy: ctx.io.env.USER ?? "malha-cli" });
    if (!ctx.values.wait) {
      printDecisions(ctx, res.decisions);
      if (!res.decisions.some((d) => d.accepted)) throw nothingRan(res.decisions);
      return;
    }
    if (!ctx.json) printDecisions(ctx, res.decisions);
    // A feed already queued or running elsewhere is followed too: the operator wants its next result.
    const follow = (d: FeedDecision) => d.accepted || d.reason === SkipReason.LEASE_HELD || d.reason === SkipReason.ALREADY_QUEUED;
    const waiting = new Set(res.decisions.filter(follow).map((d) => feedName(d.feed)));
    if (waiting.size === 0) {
      if (ctx.json)
        write(ctx.io.out, json({ decisions: res.decisions.map((d) => ({ feed: feedName(d.feed), accepted: d.accepted })), runs: [] }));
      throw nothingRan(res.decisions);
    }
    const finished = new Map<string, Run>();
    for (let poll = 1; waiting.size > 0; poll++) {
      if (poll > maxPolls) throw new CliFailure(`--timeout passed; still running: ${[...waiting].join(", ")}`, EXIT.UNAVAILABLE);
      await ctx.io.sleep(intervalMs);
      const runs = (await coordinator.listRuns({ ibge, pageSize: 500 })).runs.filter(
        (r) => !before.has(r.runId) && waiting.has(feedName(r.feed)),
      );
      for (const r of runs) {
        const feed = feedName(r.feed);
        if (r.finishedAt) {
          waiting.delete(feed);
          finished.set(feed, r);
          if (!ctx.json)
            write(
              ctx.io.out,
              `${feed}: ${enumName(RunOutcome, r.outcome).toLowerCase()}, nsu ${r.startCursor}→${r.endCursor}, ${r.documentsInserted} documents, ${r.eventsInserted} events${r.errorMessage ? `: ${r.errorMessage}` : ""}`,
            );
        } else if (!ctx.json) {
          write(
            ctx.io.out,
            `${feed}: running, nsu ${r.startCursor}→${r.endCursor} (max ${r.maxNsuSeen}), ${r.documentsInserted} documents so far`,
          );
        }
      }
    }
    const outcomes = [...finished.values()];
    if (ctx.json)
      write(
        ctx.io.out,
        json({ decisions: res.decisions.map((d) => ({ feed: feedName(d.feed), accepted: d.accepted })), runs: outcomes.map(runRow) }),
      );
    const bad = outcomes.filter((r) => r.outcome !== RunOutcome.CAUGHT_UP && r.outcome !== RunOutcome.YIELDED);
    if (bad.length)
      throw new CliFailure(
        `${bad.length} run(s) did not succeed: ${bad.map((r) => `${feedName(r.feed)} ${enumName(RunOutcome, r.outcome).toLowerCase()}`).join(", ")}`,
        EXIT.RUN_FAILED,
      );
  },
};

/** Exit 9, not 0: a script must be able to tell "synced" from "every feed was skipped" (`sync now`, `sync all`). */
function nothingRan(decisions: readonly FeedDecision[]): CliFailure {
  const reasons = [...new Set(decisions.map((d) => enumName(SkipReason, d.reason).toLowerCase()))];
  return new CliFailure(
    decisions.length === 0 ? "nothing ran: no feed matched" : `nothing ran: every feed was skipped (${reasons.join(", ")})`,
    EXIT.NOTHING_RAN,
  );
}

export const syncAll: Command = {
  usage: "sync all [--concurrency <n>] [--ambiente <a>] [--tipo-nsu <t>]",
  summary: "sync every eligible feed of every active municipality; exit 9 when every feed was skipped",
  options: { ...feedOptions, concurrency: { type: "string" } },
  async run(ctx) {
    const concurrency = Number(str(ctx.values, "concurrency") ?? "0");
    if (!Number.isInteger(concurrency) || concurrency < 0) throw new UsageError("--concurrency must be a non-negative integer");
    const coordinator = ctx.targets.client("coordinator", CoordinatorService);
    const res = await coordinator.syncAll({ concurrency, ...feedFilter(ctx), requestedBy: ctx.io.env.USER ?? "malha-cli" });
    if (!ctx.json) write(ctx.io.out, `sweep ${res.sweepId}: ${res.accepted} queued, ${res.skipped} skipped`);
    printDecisions(ctx, res.decisions, { sweepId: res.sweepId, accepted: res.accepted, skipped: res.skipped });
    // The same exit code as `sync now`: a cron job must see that the sweep queued nothing. The table above
    // (or the JSON) says why for each feed.
    if (res.accepted === 0) throw nothingRan(res.decisions);
  },
};
