import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Document, Party } from "../libs/gen/malha/nfse/v1/document_pb.js";
import { DocumentStatus } from "../libs/gen/malha/nfse/v1/document_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { cnpjProblem, formatTaxId, isCnpjShaped, stripTaxIdMask } from "../libs/tax-id/index.js";
import { str, type Command, type Values } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { enumName, iso, json, when } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

const PARTIES = ["prestador", "tomador", "destinatario"] as const;

/**
 * A party filter as people write it ("12.ABC.345/01DE-35", "529.982.247-25"): the mask goes, the letters stay;
 * a CNPJ typed in lower case is refused here with the reason, before the store is asked.
 */
function partyFilter(values: Values, name: (typeof PARTIES)[number]): string {
  const raw = str(values, name);
  if (raw === undefined) return "";
  const bare = stripTaxIdMask(raw);
  if (/^[0-9A-Za-z]{12}[0-9]{2}$/.test(bare) && !isCnpjShaped(bare)) throw new UsageError(`--${name}: the CNPJ ${cnpjProblem(bare)}`);
  return bare;
}

export const documentsList: Command = {
  usage: "documents list <ibge> [--limit <n>] [--prestador <cnpj|cpf>] [--tomador <cnpj|cpf>] [--destinatario <cnpj|cpf>]",
  summary: "the municipality's synced NFS-e, by NSU (first page; --limit up to 500), optionally of one party",
  options: { limit: { type: "string" }, prestador: { type: "string" }, tomador: { type: "string" }, destinatario: { type: "string" } },
  positionals: [1, 1],
  async run({ io, targets, values, positionals, json: asJson }) {
    const limit = Number(str(values, "limit") ?? "50");
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError("--limit must be an integer between 1 and 500");
    const store = targets.client("store", StoreService);
    const res = await store.listDocuments({
      ibge: positionals[0]!,
      pageSize: limit,
      prestadorDocument: partyFilter(values, "prestador"),
      tomadorDocument: partyFilter(values, "tomador"),
      destinatarioDocument: partyFilter(values, "destinatario"),
    });
    const rows = res.documents.map((d) => ({
      nsu: d.nsu,
      chave: d.document?.chave ?? "",
      feed: d.feed ? `${enumName(Ambiente, d.feed.ambiente)}/${enumName(TipoNsu, d.feed.tipoNsu)}` : null,
      generatedAt: iso(d.dataHoraGeracao),
      xmlSha256: d.xmlSha256,
    }));
    if (asJson) return write(io.out, json({ documents: rows, nextPageToken: res.nextPageToken || null }));
    io.out.write(
      table(
        ["nsu", "chave", "generated", "xml sha256"],
        res.documents.map((d) => [d.nsu.toString(), d.document?.chave ?? "", when(d.dataHoraGeracao), d.xmlSha256.slice(0, 16)]),
      ),
    );
  },
};

const reais = (cents: bigint | undefined) => (cents === undefined ? "-" : `R$ ${(Number(cents) / 100).toFixed(2).replace(".", ",")}`);
const percent = (ppm: number | undefined) => (ppm === undefined ? "-" : `${(ppm / 10_000).toFixed(4).replace(".", ",")} %`);
const partyLine = (p: Party | undefined) =>
  p ? `${p.document?.number ? formatTaxId(p.document.number) : "-"} ${p.name || ""}`.trim() : "-";

function fields(d: Document): [string, string][] {
  const ibs = d.ibsCbs;
  return [
    ["chave", d.chave],
    ["número", d.numero || "-"],
    ["situação", enumName(DocumentStatus, d.status)],
    ["emitente", partyLine(d.emitente)],
    ["prestador", partyLine(d.prestador)],
    ["tomador", partyLine(d.tomador)],
    ["intermediário", partyLine(d.intermediario)],
    ["destinatário", partyLine(d.destinatario)],
    ["valor do serviço", reais(d.valores?.vServCents)],
    ["valor líquido", reais(d.valores?.vLiqCents)],
    ["IBS UF", `${reais(ibs?.vIbsUfCents)} (${percent(ibs?.aliquotaIbsUfPpm)})`],
    ["IBS municipal", `${reais(ibs?.vIbsMunCents)} (${percent(ibs?.aliquotaIbsMunPpm)})`],
    ["CBS", `${reais(ibs?.vCbsCents)} (${percent(ibs?.aliquotaCbsPpm)})`],
    ["total da NFS-e (vTotNF)", reais(ibs?.vTotNfCents)],
  ];
}

export const documentsShow: Command = {
  usage: "documents show <ibge> <chave>",
  summary: "one note: parties (CNPJs formatted, letters kept), status, amounts and IBS/CBS",
  positionals: [2, 2],
  async run({ io, targets, positionals, json: asJson }) {
    const store = targets.client("store", StoreService);
    const res = await store.getDocument({ ibge: positionals[0]!, chave: positionals[1]! });
    const d = res.document?.document;
    if (!d) throw new UsageError("the store answered without a document");
    if (asJson) return write(io.out, json(Object.fromEntries(fields(d))));
    io.out.write(table(["campo", "valor"], fields(d)));
  },
};
