import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import type { FeedSpec } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { parseFeed } from "../codes.js";
import { badRequest } from "../errors.js";
import { parseIbge, ufOf } from "../ibge.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { StoreDb } from "../repo/context.js";
import {
  getMunicipality,
  listMunicipalities,
  registerMunicipality,
  updateMunicipality,
  type FeedSpecCols,
} from "../repo/municipalities.js";
import { optionalText, requiredText } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

function feedSpecs(ibge: string, specs: FeedSpec[], field: string): FeedSpecCols[] {
  const seen = new Map<string, FeedSpecCols>();
  specs.forEach((spec, i) => {
    const feed = parseFeed({ $typeName: "malha.nfse.v1.FeedKey", ibge, ambiente: spec.ambiente, tipoNsu: spec.tipoNsu }, `${field}[${i}]`);
    seen.set(`${feed.ambiente}/${feed.tipoNsu}`, { ambiente: feed.ambiente, tipoNsu: feed.tipoNsu });
  });
  return [...seen.values()];
}

export function municipalityHandlers(db: StoreDb, log: Logger): Impl {
  return {
    async registerMunicipality(req) {
      const ibge = parseIbge(req.ibge);
      const name = requiredText(req.name, "name", 150);
      const uf = req.uf.trim().toUpperCase();
      if (uf !== ufOf(ibge))
        throw badRequest(`uf ${JSON.stringify(req.uf.slice(0, 8))} does not match IBGE prefix ${ibge.slice(0, 2)} (${ufOf(ibge)})`);
      const feeds = feedSpecs(ibge, req.feeds, "feeds");
      const result = await registerMunicipality(db, { ibge, name, uf, active: req.active, feeds });
      return result;
    },

    async getMunicipality(req) {
      return { municipality: await getMunicipality(db, parseIbge(req.ibge)) };
    },

    async listMunicipalities(req) {
      const uf = req.uf.trim().toUpperCase();
      if (uf !== "" && !/^[A-Z]{2}$/.test(uf)) throw badRequest("uf must be a two-letter state code");
      const page = await listMunicipalities(db, {
        ...(req.active !== undefined ? { active: req.active } : {}),
        ...(uf ? { uf } : {}),
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { municipalities: page.items, nextPageToken: page.next };
    },

    async updateMunicipality(req) {
      const ibge = parseIbge(req.ibge);
      optionalText(req.requestedBy, "requested_by", 191);
      const municipality = await updateMunicipality(db, {
        ibge,
        ...(req.active !== undefined ? { active: req.active } : {}),
        ...(req.name !== undefined ? { name: requiredText(req.name, "name", 150) } : {}),
        enable: feedSpecs(ibge, req.enableFeeds, "enable_feeds"),
        disable: feedSpecs(ibge, req.disableFeeds, "disable_feeds"),
      });
      // Operator changes leave a trace: who asked, and the municipality as it is now.
      log.info(
        {
          ibge,
          requestedBy: req.requestedBy,
          active: municipality.active,
          feeds: municipality.feeds.map((f) => `${f.ambiente}/${f.tipoNsu}:${f.enabled}`),
        },
        "municipality updated",
      );
      return { municipality };
    },
  };
}
