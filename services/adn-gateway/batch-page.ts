// One distribution page, shared by FetchBatch and DeliverFeeds: the ADN call, the envelope's verdict and
// the choice of entries by the NSUs the envelope carries, all before any item is decoded, so that
// DeliverFeeds can send the next ADN call while the items are still Base64 + gzip.
import type { RawLoteItem } from "../../libs/adn/envelope.js";
import { municipiosDfeUrl } from "../../libs/adn/http.js";
import type { BatchStatus, CallInfo } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import type { AdnGateway } from "./gateway.js";
import { callInfo, interpret, selectBatch } from "./results.js";
import { validFeed } from "./validate.js";

export interface BatchPage {
  status: BatchStatus;
  highestNsu: bigint;
  pageSizeSeen: number;
  droppedCount: number;
  call: CallInfo;
  /** The entries to decode, in the order the response carries them. */
  entries: RawLoteItem[];
}

export async function readBatchPage(
  gateway: AdnGateway,
  log: Logger,
  req: { feed?: FeedKey | undefined; afterNsu: bigint },
  signal: AbortSignal,
): Promise<BatchPage> {
  const feed = validFeed(req.feed);
  const url = municipiosDfeUrl(gateway.baseUrl(feed.ambiente), req.afterNsu, feed.tipoNsu, true);
  const x = await gateway.exchange(feed.ibge, feed.ambiente, url, "dfe_lote", signal);
  const found = interpret(x.envelope, x.httpStatus, feed.ambiente);
  // The same NSU decodeItem gives the item: 0 when the envelope has none (such a fault rides along).
  const candidates = found.found ? x.envelope.lote.map((raw) => ({ nsu: raw.nsu !== undefined ? BigInt(raw.nsu) : 0n, raw })) : [];
  const batch = selectBatch(candidates, req.afterNsu, x.envelope.lote.length);
  if (batch.duplicateCount > 0 || batch.orphanFaults > 0) {
    log.warn(
      { ibge: feed.ibge, duplicates: batch.duplicateCount, orphanFaults: batch.orphanFaults },
      "ADN batch had repeated NSUs or NSU-less items",
    );
  }
  return {
    status: batch.status,
    highestNsu: batch.highestNsu,
    pageSizeSeen: batch.pageSizeSeen,
    droppedCount: batch.droppedCount,
    call: callInfo(x.envelope, x.attempts, x.elapsedMs, x.httpStatus),
    entries: batch.items.map((c) => c.raw),
  };
}
