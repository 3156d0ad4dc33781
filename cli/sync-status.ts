import { CoordinatorService, FeedState, type FeedStatus } from "../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { RunOutcome } from "../libs/gen/malha/store/v1/types_pb.js";
import { str, type Command } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { enumName, iso, json, when } from "./format.js";
import { write } from "./io.js";
import { feedFilter, feedName, feedOptions, pacing } from "./sync-common.js";
import { table } from "./table.js";

const BUSY = new Set([FeedState.QUEUED, FeedState.RUNNING]);

function statusRow(s: FeedStatus) {
  return {
    feed: feedName(s.feed),
    state: enumName(FeedState, s.state),
    cursor: s.cursor,
    maxNsu: s.maxNsu,
    documents: s.documentsCount,
    events: s.eventsCount,
    faults: s.faultsCount,
    // A feed that never ran has no outcome (UNSPECIFIED on the wire): null, not a made-up value.
    lastOutcome: s.lastOutcome === RunOutcome.UNSPECIFIED ? null : enumName(RunOutcome, s.lastOutcome),
    lastSuccessAt: iso(s.lastSuccessAt),
    nextEligibleAt: iso(s.nextEligibleAt),
    cooldownUntil: iso(s.cooldownUntil),
    lastError: s.lastErrorMessage || null,
    leaseHolder: s.leaseHolder || null,
    certificate: s.hasActiveCertificate,
  };
}

function renderStatus(statuses: FeedStatus[]): string {
  return table(
    ["feed", "state", "cursor", "max nsu", "docs", "events", "faults", "last outcome", "next eligible", "cool-down", "last error"],
    statuses.map((s) => [
      feedName(s.feed),
      enumName(FeedState, s.state).toLowerCase(),
      s.cursor.toString(),
      s.maxNsu.toString(),
      s.documentsCount.toString(),
      s.eventsCount.toString(),
      s.faultsCount.toString(),
      s.lastOutcome === RunOutcome.UNSPECIFIED ? "never ran" : enumName(RunOutcome, s.lastOutcome).toLowerCase(),
      when(s.nextEligibleAt),
      when(s.cooldownUntil),
      (s.lastErrorMessage || "-").slice(0, 60),
    ]),
  );
}

export const syncStatus: Command = {
  usage: "sync status [--ibge <ibge>] [--watch [--interval <s>] [--until-idle] [--timeout <s>]]",
  summary: "feed states as a table; --watch refreshes it live, --until-idle stops at the first refresh with nothing queued or running",
  options: {
    ...feedOptions,
    ibge: { type: "string" },
    watch: { type: "boolean" },
    interval: { type: "string" },
    "until-idle": { type: "boolean" },
    timeout: { type: "string" },
  },
  async run(ctx) {
    const { intervalMs, maxPolls: maxFrames } = pacing(ctx);
    if ((ctx.values["until-idle"] || str(ctx.values, "timeout")) && !ctx.values.watch)
      throw new UsageError("--until-idle and --timeout go with --watch");
    const coordinator = ctx.targets.client("coordinator", CoordinatorService);
    const filter = { ibge: str(ctx.values, "ibge") ?? "", ...feedFilter(ctx) };
    const fetch = async () => {
      const all: FeedStatus[] = [];
      let pageToken = "";
      do {
        const res = await coordinator.listFeedStatus({ ...filter, pageSize: 500, pageToken });
        all.push(...res.statuses);
        pageToken = res.nextPageToken;
      } while (pageToken);
      return all;
    };
    for (let frame = 1; ; frame++) {
      const statuses = await fetch();
      if (ctx.json) write(ctx.io.out, json(statuses.map(statusRow)));
      else {
        const busy = statuses.filter((s) => BUSY.has(s.state)).length;
        const head = ctx.values.watch ? `${new Date().toISOString()}  ${statuses.length} feeds, ${busy} queued or running\n` : "";
        ctx.io.out.write(
          `${ctx.values.watch && ctx.io.tty ? "\x1b[H\x1b[2J" : ""}${head}${renderStatus(statuses)}${ctx.values.watch && !ctx.io.tty ? "\n" : ""}`,
        );
      }
      if (!ctx.values.watch) return;
      if (ctx.values["until-idle"] && statuses.every((s) => !BUSY.has(s.state))) return;
      if (frame >= maxFrames) throw new CliFailure("--timeout passed with feeds still queued or running", EXIT.UNAVAILABLE);
      await ctx.io.sleep(intervalMs);
    }
  },
};
