import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import type { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { FeedState } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger, SyncCondition } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { LeaseManager } from "../../libs/leases/types.js";
import { invalidArgument } from "../../libs/rpc/errors.js";
import type { CoordinatorConfig } from "./config.js";
import { feedId, leaseKeyOf } from "./feed-key.js";
import { listQueuedFeeds, queuedPageTokens } from "./queued-page.js";
import type { Scheduler } from "./scheduler.js";
import { feedStatus } from "./status.js";

export interface HandlerDeps {
  store: Client<typeof StoreService>;
  leases: LeaseManager;
  scheduler: Scheduler;
  config: CoordinatorConfig;
  now: () => number;
  /** From the cached view of the vault's ACTIVE certificates; undefined = unknown (shown as false). */
  hasActiveCertificate?: (ibge: string) => Promise<boolean | undefined>;
}

const IBGE = /^\d{7}$/;
const UF = /^[A-Z]{2}$/;

/**
 * The durable part of each state, which the store selects in SQL (docs/decisions/0026-feed-filters-in-sql.md).
 * One condition per state, so the store's page token, bound to its filters, is bound to the state too.
 * The live lease and queue only ever lift a feed into RUNNING or QUEUED, so each condition's rows are a
 * superset of the state's: the few that moved on are dropped below.
 */
export const CONDITION_OF: Record<FeedState, SyncCondition> = {
  [FeedState.UNSPECIFIED]: SyncCondition.UNSPECIFIED,
  [FeedState.DISABLED]: SyncCondition.DISABLED,
  [FeedState.RUNNING]: SyncCondition.RUNNING,
  // This replica's queue lives in memory: its page is read from the queue (queued-page.ts), each of its
  // feeds among the ones not running.
  [FeedState.QUEUED]: SyncCondition.NOT_RUNNING,
  [FeedState.COOLING_DOWN]: SyncCondition.COOLING_DOWN,
  [FeedState.WAITING]: SyncCondition.WAITING,
  [FeedState.IDLE]: SyncCondition.ELIGIBLE,
};

function checkIbge(ibge: string, required: boolean): void {
  if (ibge === "" && !required) return;
  if (!IBGE.test(ibge)) throw invalidArgument(`ibge must be 7 digits, got ${JSON.stringify(ibge.slice(0, 20))}`);
}

export function coordinatorHandlers(deps: HandlerDeps): Partial<ServiceImpl<typeof CoordinatorService>> {
  const { store, leases, scheduler, config, now, hasActiveCertificate } = deps;
  const queuedTokens = queuedPageTokens();
  const live = async (feed: NonNullable<Parameters<typeof feedId>[0]>) => {
    const key = feedId(feed);
    const holder = (await leases.holderOf(leaseKeyOf(feed)))?.holder;
    return {
      now: now(),
      queuedHere: scheduler.isQueuedHere(key),
      ...(holder ? { leaseHolder: holder } : {}),
      bootstrapThresholdNsu: config.bootstrapThresholdNsu,
      hasActiveCertificate: (await hasActiveCertificate?.(feed.ibge).catch(() => undefined)) ?? false,
    };
  };

  return {
    async syncNow(req) {
      checkIbge(req.ibge, true);
      const decisions = await scheduler.enqueueFeeds(
        {
          ibge: req.ibge,
          ...(req.ambiente !== undefined ? { ambiente: req.ambiente } : {}),
          ...(req.tipoNsu !== undefined ? { tipoNsu: req.tipoNsu } : {}),
        },
        RunTrigger.SYNC_NOW,
      );
      if (decisions.length === 0) throw new ConnectError(`no feed of municipality ${req.ibge} matches`, Code.NotFound);
      return { decisions };
    },

    async syncAll(req) {
      if (req.concurrency < 0) throw invalidArgument("concurrency must not be negative");
      const { sweepId, decisions } = await scheduler.sweepAll(
        {
          ...(req.ambiente !== undefined ? { ambiente: req.ambiente } : {}),
          ...(req.tipoNsu !== undefined ? { tipoNsu: req.tipoNsu } : {}),
        },
        req.concurrency || config.workerConcurrency,
      );
      const accepted = decisions.filter((d) => d.accepted).length;
      return { sweepId, accepted, skipped: decisions.length - accepted, decisions };
    },

    async getFeedStatus(req) {
      if (!req.feed) throw invalidArgument("feed is required");
      checkIbge(req.feed.ibge, true);
      const { state } = await store.getSyncState({ feed: req.feed });
      if (!state) throw new ConnectError(`feed ${feedId(req.feed)} not found`, Code.NotFound);
      return { status: feedStatus(state, await live(req.feed)) };
    },

    async listFeedStatus(req) {
      checkIbge(req.ibge, false);
      if (req.uf !== "" && !UF.test(req.uf))
        throw invalidArgument(`uf must be two capital letters, got ${JSON.stringify(req.uf.slice(0, 8))}`);
      const condition = CONDITION_OF[req.state];
      if (condition === undefined) throw invalidArgument(`unknown state ${req.state}`);
      if (req.state === FeedState.QUEUED) {
        return listQueuedFeeds(req, {
          store,
          tokens: queuedTokens,
          queuedFeeds: () => scheduler.queuedFeeds(),
          status: async (state) => feedStatus(state, await live(state.feed!)),
        });
      }
      const page = await store.listSyncStates({
        ibge: req.ibge,
        ambiente: req.ambiente,
        tipoNsu: req.tipoNsu,
        uf: req.uf,
        condition,
        ...(req.lastRunFailed !== undefined ? { lastRunFailed: req.lastRunFailed } : {}),
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      const statuses = [];
      for (const state of page.states) {
        if (!state.feed) continue;
        const status = feedStatus(state, await live(state.feed));
        if (req.state === FeedState.UNSPECIFIED || status.state === req.state) statuses.push(status);
      }
      return { statuses, nextPageToken: page.nextPageToken };
    },

    async listRuns(req) {
      checkIbge(req.ibge, false);
      const { runs, nextPageToken } = await store.listRuns({
        ibge: req.ibge,
        ambiente: req.ambiente,
        tipoNsu: req.tipoNsu,
        outcome: req.outcome,
        ...(req.since ? { since: req.since } : {}),
        runningOnly: req.runningOnly,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { runs, nextPageToken };
    },

    async cancelSync(req) {
      const target = req.target;
      if (target.case === "feed") {
        checkIbge(target.value.ibge, true);
        if (scheduler.dequeue(feedId(target.value))) return { dequeued: true, nothingToCancel: false };
      } else if (target.case !== "runId") {
        throw invalidArgument("feed or run_id is required");
      }
      const res = await store.requestRunCancellation({
        target: target.case === "feed" ? { case: "feed", value: target.value } : { case: "runId", value: target.value },
        requestedBy: req.requestedBy,
        reason: req.reason,
      });
      return { dequeued: false, ...(res.run ? { run: res.run } : {}), nothingToCancel: res.alreadyFinished };
    },
  };
}
