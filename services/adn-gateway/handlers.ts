import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RawLoteItem } from "../../libs/adn/envelope.js";
import { municipiosDfeUrl, municipiosEventosUrl } from "../../libs/adn/http.js";
import { decodeItem } from "../../libs/adn/item.js";
import {
  FetchBatchResponseSchema,
  FetchSingleResponseSchema,
  GetDocumentByChaveResponseSchema,
  BatchStatus,
  StreamBatchResponseSchema,
  StreamFeedResponseSchema,
  type AdnGatewayService,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { invalidArgument, notFound } from "../../libs/rpc/errors.js";
import { readBatchPage } from "./batch-page.js";
import type { AdnGateway } from "./gateway.js";
import { itemChunks } from "./item-chunks.js";
import type { AdnMetrics } from "./metrics.js";
import { callInfo, decodeAll, hole, interpret } from "./results.js";
import { validAmbiente, validChave, validFeed, validIbge } from "./validate.js";

/** StreamBatch chunk size: a handful of messages per batch, none near gRPC's 4 MiB default. */
const CHUNK_BYTES = 1024 * 1024;

export function createHandlers(gateway: AdnGateway, metrics: AdnMetrics, log: Logger): Partial<ServiceImpl<typeof AdnGatewayService>> {
  const countItems = (items: DistributionItem[]) => {
    for (const kind of ["document", "event", "fault"] as const) metrics.items(kind, items.filter((i) => i.content.case === kind).length);
  };
  /** A page's items, decoded and serialized in chunks (StreamBatch, StreamFeed), each counted once. */
  const pageChunks = (entries: RawLoteItem[], signal: AbortSignal) =>
    itemChunks(entries, {
      decode: gateway.decodeOptions,
      chunkBytes: CHUNK_BYTES,
      maxBatchBytes: gateway.maxBatchBytes,
      signal,
      onItem: (item) => {
        if (item.content.case) metrics.items(item.content.case, 1);
      },
    });

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

    async *streamBatch(req, ctx) {
      const page = await readBatchPage(gateway, log, req, ctx.signal);
      const { entries, ...facts } = page;
      yield create(StreamBatchResponseSchema, { part: { case: "head", value: { ...facts, itemCount: entries.length } } });
      for await (const chunk of pageChunks(entries, ctx.signal))
        yield create(StreamBatchResponseSchema, { part: { case: "itemsChunk", value: chunk } });
    },

    async *streamFeed(req, ctx) {
      let after = req.afterNsu;
      let next = readBatchPage(gateway, log, { feed: req.feed, afterNsu: after }, ctx.signal);
      for (;;) {
        const { entries, ...facts } = await next;
        const last = facts.status === BatchStatus.END_OF_STREAM;
        if (!last) {
          // DOCUMENTS_FOUND means a highest NSU above `after`: the next call leaves now, one at a time,
          // and overlaps this page's decoding and delivery.
          after = facts.highestNsu;
          next = readBatchPage(gateway, log, { feed: req.feed, afterNsu: after }, ctx.signal);
          // Dropped unread if this stream ends first (cancelled, or this page failed).
          next.catch(() => undefined);
        }
        yield create(StreamFeedResponseSchema, { part: { case: "head", value: { ...facts, itemCount: entries.length } } });
        for await (const chunk of pageChunks(entries, ctx.signal))
          yield create(StreamFeedResponseSchema, { part: { case: "itemsChunk", value: chunk } });
        yield create(StreamFeedResponseSchema, { part: { case: "pageEnd", value: {} } });
        if (last) return;
      }
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
