// ListFeedStatus with state QUEUED. A feed is queued in one replica's memory (its pools), which no SQL can
// select: the page is taken from this replica's queue, at most page_size feeds of it per call, and only
// those feeds' durable states are asked of the store, UF and last-run filters applied there in SQL. A
// page costs page_size feeds at most, whatever the fleet (docs/decisions/0026-feed-filters-in-sql.md).
import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import { FeedState, type FeedStatus, type ListFeedStatusRequest } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { SyncCondition, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createPageTokens, type PageTokens } from "../../libs/rpc/page-token.js";
import { pageSizeOf } from "../../libs/rpc/page-size.js";
import { feedId } from "./feed-key.js";

/** ListFeedStatus's page sizes (decision 0021): 0 = 100, clamped to 1000. */
export const FEED_STATUS_PAGE = { default: 100, max: 1000 };
const METHOD = "ListFeedStatus.QUEUED";
/** Store calls in flight for one page: a page of 1,000 queued feeds must not open 1,000 calls at once. */
const STORE_CALLS_AT_ONCE = 8;

export interface QueuedPageDeps {
  store: Client<typeof StoreService>;
  tokens: PageTokens;
  /** The feeds waiting in this replica's pools. */
  queuedFeeds: () => FeedKey[];
  /** A feed's status with what is live (lease, queue). */
  status: (state: SyncState) => Promise<FeedStatus>;
}

/**
 * The tokens of QUEUED pages, under a key made at start-up and never configured: a position in one
 * replica's queue means nothing in another's, so another replica refuses it (INVALID_PAGE_TOKEN) and the
 * client starts over, as it must.
 */
export function queuedPageTokens(): PageTokens {
  return createPageTokens({ secret: randomBytes(32), errorDomain: "malha.coordinator" });
}

/** The store's order: (ibge, ambiente, tipo_nsu). */
function compareFeeds(a: FeedKey, b: FeedKey): number {
  if (a.ibge !== b.ibge) return a.ibge < b.ibge ? -1 : 1;
  return a.ambiente - b.ambiente || a.tipoNsu - b.tipoNsu;
}

export async function listQueuedFeeds(
  req: ListFeedStatusRequest,
  deps: QueuedPageDeps,
): Promise<{ statuses: FeedStatus[]; nextPageToken: string }> {
  const pageSize = pageSizeOf(req.pageSize, FEED_STATUS_PAGE);
  const filter = { ibge: req.ibge, ambiente: req.ambiente, tipoNsu: req.tipoNsu, uf: req.uf, lastRunFailed: req.lastRunFailed };
  const after = deps.tokens.decode(METHOD, filter, req.pageToken, ["string", "int", "int"]);
  const afterFeed = after && ({ ibge: after[0], ambiente: after[1], tipoNsu: after[2] } as FeedKey);
  const seen = new Set<string>();
  const candidates = deps
    .queuedFeeds()
    .filter((f) => {
      if ((req.ibge && f.ibge !== req.ibge) || (req.ambiente && f.ambiente !== req.ambiente) || (req.tipoNsu && f.tipoNsu !== req.tipoNsu))
        return false;
      if (afterFeed && compareFeeds(f, afterFeed) <= 0) return false;
      const id = feedId(f);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    })
    .sort(compareFeeds);
  const window = candidates.slice(0, pageSize);

  // One store call per municipality of the window (a municipality has a few feeds): its rows that are not
  // running and match the UF and last-run filters, judged in SQL as for every other state.
  const states = new Map<string, SyncState>();
  const ibges = [...new Set(window.map((f) => f.ibge))];
  const ask = async () => {
    for (let ibge = ibges.shift(); ibge !== undefined; ibge = ibges.shift()) {
      const page = await deps.store.listSyncStates({
        ibge,
        ambiente: req.ambiente,
        tipoNsu: req.tipoNsu,
        uf: req.uf,
        condition: SyncCondition.NOT_RUNNING,
        ...(req.lastRunFailed !== undefined ? { lastRunFailed: req.lastRunFailed } : {}),
        pageSize: 100,
      });
      for (const s of page.states) if (s.feed) states.set(feedId(s.feed), s);
    }
  };
  await Promise.all(Array.from({ length: Math.min(STORE_CALLS_AT_ONCE, ibges.length) }, ask));

  const statuses: FeedStatus[] = [];
  for (const feed of window) {
    const state = states.get(feedId(feed));
    if (!state) continue;
    const status = await deps.status(state);
    // Started (or dequeued) since the queue was read: the page holds fewer rows, which a page size allows.
    if (status.state === FeedState.QUEUED) statuses.push(status);
  }
  const last = window.at(-1);
  const more = candidates.length > window.length && last !== undefined;
  return { statuses, nextPageToken: more ? deps.tokens.encode(METHOD, filter, [last.ibge, last.ambiente, last.tipoNsu]) : "" };
}
