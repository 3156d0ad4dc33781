import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { municipiosDfeUrl, municipiosEventosUrl } from "../../libs/adn/http.js";
import { decodeItem } from "../../libs/adn/item.js";
import {
  FetchBatchResponseSchema,
  FetchSingleResponseSchema,
  GetDocumentByChaveResponseSchema,
  type AdnGatewayService,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { invalidArgument, notFound } from "../../libs/rpc/errors.js";
import { serverClosingKey } from "../../libs/rpc/context.js";
import { readBatchPage } from "./batch-page.js";
import { deliverFeeds } from "./deliver-feeds.js";
import type { AdnGateway } from "./gateway.js";
import type { PageApply } from "./page-apply.js";
import type { AdnMetrics } from "./metrics.js";
import { callInfo, decodeAll, hole, interpret } from "./results.js";
import { validAmbiente, validChave, validFeed, validIbge } from "./validate.js";

export function createHandlers(
  gateway: AdnGateway,
  store: PageApply,
  metrics: AdnMetrics,
  log: Logger,
): Partial<ServiceImpl<typeof AdnGatewayService>> {
  const countItems = (items: DistributionItem[]) => {
    for (const kind of ["document", "event", "fault"] as const) metrics.items(kind, items.filter((i) => i.content.case === kind).length);
  };
  return {
    async fetchBatch(req, ctx) {
      const page = await readBatchPage(gateway, log, req, ctx.signal);
      const items = page.entries.map((raw) => decodeItem(raw, gateway.decodeOptions));
      countItems(items);
      return create(FetchBatchResponseSchema, {
        status: page.status,
        items,
        highestNsu: page.highestNsu,
        pageSizeSeen: page.pageSizeSeen,
        droppedCount: page.droppedCount,
        call: page.call,
      });
    },

    deliverFeeds(requests, ctx) {
      const deps = { gateway, store, log, maxBatchBytes: gateway.maxBatchBytes, ended: (code: string) => metrics.deliveryEnded(code) };
      return deliverFeeds(deps, requests, ctx.signal, ctx.values.get(serverClosingKey));
    },

    async fetchSingle(req, ctx) {
      const feed = validFeed(req.feed);
      if (req.nsu < 1n) throw invalidArgument("nsu must be at least 1");
      const url = municipiosDfeUrl(gateway.baseUrl(feed.ambiente), req.nsu, feed.tipoNsu, false);
      const x = await gateway.exchange(feed.ibge, feed.ambiente, url, "dfe_nsu", ctx.signal);
      const found = interpret(x.envelope, x.httpStatus, feed.ambiente);
      const call = callInfo(x.envelope, x.attempts, x.elapsedMs, x.httpStatus);
      const item = found.found ? decodeAll(x.envelope, gateway.decodeOptions).find((i) => i.nsu === req.nsu) : undefined;
      if (item) {
        countItems([item]);
        return create(FetchSingleResponseSchema, { result: { case: "item", value: item }, call });
      }
      const confirmed = found.found
        ? hole(req.nsu, "", "the ADN answered other NSUs only", x.envelope, Date.now())
        : hole(req.nsu, found.codigo, found.descricao, x.envelope, Date.now());
      return create(FetchSingleResponseSchema, { result: { case: "hole", value: confirmed }, call });
    },

    async getDocumentByChave(req, ctx) {
      const ibge = validIbge(req.ibge);
      const ambiente = validAmbiente(req.ambiente);
      const chave = validChave(req.chave);
      const url = municipiosEventosUrl(gateway.baseUrl(ambiente), chave);
      const x = await gateway.exchange(ibge, ambiente, url, "nfse_eventos", ctx.signal);
      const found = interpret(x.envelope, x.httpStatus, ambiente);
      if (!found.found) throw notFound(`the ADN has no document for chave ${chave}${found.codigo ? ` (${found.codigo})` : ""}`);
      const items = decodeAll(x.envelope, gateway.decodeOptions);
      countItems(items);
      const byNsu = (a: DistributionItem, b: DistributionItem) => (a.nsu < b.nsu ? -1 : a.nsu > b.nsu ? 1 : 0);
      const documents = items.filter((i) => i.content.case === "document");
      const document = documents.find((i) => i.content.case === "document" && i.content.value.chave === chave) ?? documents[0];
      return create(GetDocumentByChaveResponseSchema, {
        ...(document ? { document } : {}),
        events: items.filter((i) => i.content.case === "event").sort(byNsu),
        faults: items.filter((i) => i.content.case === "fault"),
        call: callInfo(x.envelope, x.attempts, x.elapsedMs, x.httpStatus),
      });
    },
  };
}
