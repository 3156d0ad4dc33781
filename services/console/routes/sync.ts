// The Sincronização page's API: the feed list and the sync buttons.
import { requireIbge, json } from "../http-kit.js";
import { get, post, type Route } from "../router.js";
import type { SyncView } from "../sync-view.js";

export function syncRoutes(sync: SyncView): Route[] {
  return [
    get(/^\/api\/feeds$/, async ({ res }) => json(res, 200, await sync.listFeeds())),
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
  ];
}
