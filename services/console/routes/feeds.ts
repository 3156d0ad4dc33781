// A feed's page (runs, quarantine, holes, reconciliation) and its quarantined items' raw XML.
import type { FeedDetailView } from "../feed-view.js";
import { attachment, badRequest, json } from "../http-kit.js";
import { parseFeedKey } from "../proto-view.js";
import { get, type Route } from "../router.js";

const FEED = String.raw`\/api\/feeds\/([^/]+)\/([^/]+)\/([^/]+)`;

export function feedRoutes(view: FeedDetailView): Route[] {
  return [
    get(new RegExp(`^${FEED}$`), async ({ res, params }) => {
      json(res, 200, await view.feedPage(parseFeedKey(params[0]!, params[1]!, params[2]!)));
    }),
    get(new RegExp(`^${FEED}\\/quarentena\\/([0-9]{1,20})\\/([^/]+)$`), async ({ res, params, op, log }) => {
      const feed = parseFeedKey(params[0]!, params[1]!, params[2]!);
      const nsu = BigInt(params[3]!);
      if (nsu > 18_446_744_073_709_551_615n) throw badRequest("nsu does not fit 64 bits");
      const id = params[4]!;
      if (id.length > 128) throw badRequest("quarantine id is longer than 128 characters");
      const file = await view.quarantineFile(feed, nsu, id);
      log.info({ actor: op.user, action: "download-quarantine", ibge: feed.ibge, nsu: nsu.toString(), id }, "console download");
      attachment(res, file.body, file.filename, file.contentType);
    }),
  ];
}
