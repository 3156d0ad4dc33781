import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { str, type Command } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { enumName, iso, json, when } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

export const documentsList: Command = {
  usage: "documents list <ibge> [--limit <n>]",
  summary: "the municipality's synced NFS-e, by NSU (first page; --limit up to 500)",
  options: { limit: { type: "string" } },
  positionals: [1, 1],
  async run({ io, targets, values, positionals, json: asJson }) {
    const limit = Number(str(values, "limit") ?? "50");
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit must be an integer between 1 and 500");
    const store = targets.client("store", StoreService);
    const res = await store.listDocuments({ ibge: positionals[0]!, pageSize: limit });
    const rows = res.documents.map((d) => ({
      nsu: d.nsu,
      chave: d.document?.chave ?? "",
      feed: d.feed ? `${enumName(Ambiente, d.feed.ambiente)}/${enumName(TipoNsu, d.feed.tipoNsu)}` : null,
      generatedAt: iso(d.dataHoraGeracao),
      xmlSha256: d.xmlSha256,
    }));
    if (asJson) return write(io.out, json({ documents: rows, nextPageToken: res.nextPageToken || null }));
    io.out.write(table(["nsu", "chave", "generated", "xml sha256"], res.documents.map((d) => [d.nsu.toString(), d.document?.chave ?? "", when(d.dataHoraGeracao), d.xmlSha256.slice(0, 16)])));
  },
};
