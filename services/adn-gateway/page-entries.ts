// A DeliverFeeds page's entries as the store's ApplyBatch takes them: undecoded, as the ADN sent them
// (docs/decisions/0034-store-decodes-the-page.md). The gateway still bounds what one request carries.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { RawLoteItem } from "../../libs/adn/envelope.js";
import { toLoteDfeEntry } from "../../libs/adn/lote-entry.js";
import type { LoteDfeEntrySchema } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { resourceExhausted } from "../../libs/rpc/errors.js";

type Entry = MessageInitShape<typeof LoteDfeEntrySchema>;

/** The tags, lengths and NSU of one serialized entry inside the request, at most. */
const ENTRY_OVERHEAD_BYTES = 56;

/**
 * The entries for ApplyBatch and their serialized size (at most); RESOURCE_EXHAUSTED naming the NSU once
 * they would exceed `maxBatchBytes`.
 */
export function pageEntries(entries: readonly RawLoteItem[], maxBatchBytes: number): { entries: Entry[]; bytes: number } {
  let total = 0;
  const out = entries.map((raw) => {
    total +=
      ENTRY_OVERHEAD_BYTES +
      Buffer.byteLength(raw.arquivoXml ?? "") +
      Buffer.byteLength(raw.chaveAcesso) +
      Buffer.byteLength(raw.tipoDocumento) +
      Buffer.byteLength(raw.tipoEvento) +
      Buffer.byteLength(raw.dataHoraGeracao ?? "");
    if (total > maxBatchBytes) {
      throw resourceExhausted(
        `the page's entries exceed ADN_MAX_BATCH_BYTES (${maxBatchBytes} bytes) at NSU ${raw.nsu ?? "(none)"}; the store could not take them in one request`,
      );
    }
    return toLoteDfeEntry(raw);
  });
  return { entries: out, bytes: total };
}
