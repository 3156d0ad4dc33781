// The Sincronização page's API: one page of the feed list with its filters, the sync buttons and Cancelar.
import type { FeedStateName } from "../api-types.js";
import { badRequest, json, requireIbge } from "../http-kit.js";
import { parseFeedKey } from "../proto-view.js";
import { get, post, type Route } from "../router.js";
import { MAX_PAGE_SIZE, type FeedFilter, type SyncView } from "../sync-view.js";

const STATES: readonly FeedStateName[] = ["idle", "queued", "running", "waiting", "cooling_down", "disabled", "error"];

export function parseFeedFilter(query: URLSearchParams): FeedFilter {
  const q = query.get("q") ?? "";
  if (q.length > 100) throw badRequest("q is longer than 100 characters");
  const uf = query.get("uf") ?? "";
  if (uf !== "" && !/^[A-Z]{2}$/.test(uf)) throw badRequest("uf must be two upper-case letters");
  const state = query.get("state") ?? "";
  if (state !== "" && !(STATES as readonly string[]).includes(state)) throw badRequest(`state must be one of ${STATES.join(", ")}`);
  const size = query.get("pageSize");
  const pageSize = size === null ? undefined : Number(size);
  if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= MAX_PAGE_SIZE)) {
    throw badRequest(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  const pageToken = query.get("pageToken") ?? "";
  if (pageToken.length > 2048) throw badRequest("pageToken is longer than 2048 characters");
  return {
    ...(q ? { q } : {}),
    ...(uf ? { uf } : {}),
    ...(state ? { state: state as FeedStateName } : {}),
    ...(pageSize !== undefined ? { pageSize } : {}),
    ...(pageToken ? { pageToken } : {}),
  };
}

export function syncRoutes(sync: SyncView): Route[] {
  return [
    get(/^\/api\/feeds$/, async ({ res, query }) => json(res, 200, await sync.listFeeds(parseFeedFilter(query)))),
    post(/^\/api\/sync-all$/, "operator", "sync all municipalities", async ({ res, op, log }) => {
      const result = await sync.syncAll(`console:${op.user}`);
      log.info({ actor: op.user, action: "sync-all", accepted: result.accepted, skipped: result.skipped }, "console action");
      json(res, 200, result);
    }),
    post(/^\/api\/municipios\/([^/]+)\/sync$/, "operator", "sync a municipality", async ({ res, op, log, params }) => {
      const ibge = requireIbge(params[0]!);
      const result = await sync.syncNow(`console:${op.user}`, ibge);
      log.info({ actor: op.user, action: "sync-now", ibge, accepted: result.accepted, skipped: result.skipped }, "console action");
      json(res, 200, result);
    }),
    post(/^\/api\/feeds\/([^/]+)\/([^/]+)\/([^/]+)\/cancel$/, "operator", "cancel a sync", async ({ res, op, log, params }) => {
      const feed = parseFeedKey(params[0]!, params[1]!, params[2]!);
      const result = await sync.cancel(`console:${op.user}`, feed);
      log.info({ actor: op.user, action: "cancel", ibge: feed.ibge, feed: `${params[1]}/${params[2]}`, ...result }, "console action");
      json(res, 200, result);
    }),
  ];
}
