// Test builders: distribution items shaped like the ADN gateway's output, and a connected store client.
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { TaxIdKind } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { DistributionItemSchema, FaultReason, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { Ambiente, TipoNsu, type FeedKey } from "../../../libs/gen/malha/nfse/v1/feed_pb.js";
import { TipoEvento } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { createServiceClient } from "../../../libs/rpc/client.js";
import { parseIbge, ufOf } from "../ibge.js";

export const feedOf = (ibge: string, tipoNsu = TipoNsu.DISTRIBUICAO): FeedKey => ({
  $typeName: "malha.nfse.v1.FeedKey",
  ibge,
  ambiente: Ambiente.PRODUCAO,
  tipoNsu,
});

/** A 50-digit chave that encodes its number, so tests can name notes by n. */
export const chaveOf = (n: number) => `3550308${String(n).padStart(43, "0")}`;
export const eventIdOf = (chave: string, codigo: string, seq = 1) => `EVT${chave}${codigo}${String(seq).padStart(3, "0")}`;

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

export interface DocOptions {
  prestador?: string;
  tomador?: string;
  dhEmi?: Date;
  competencia?: { year: number; month: number; day: number };
  xmlPadding?: number;
  variant?: string;
}

export function docItem(nsu: number | bigint, n: number, opts: DocOptions = {}): DistributionItem {
  const chave = chaveOf(n);
  // CRLF and a non-ASCII name on purpose: the XML must come back byte-exact.
  const xml = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\r\n<NFSe versao="1.01"><infNFSe Id="NFS${chave}"><xNome>Padaria São João ${opts.variant ?? ""}</xNome>` +
      `${"x".repeat(opts.xmlPadding ?? 0)}</infNFSe></NFSe>`,
    "utf8",
  );
  return create(DistributionItemSchema, {
    nsu: BigInt(nsu),
    chave,
    tipoDocumento: "NFSE",
    dataHoraGeracao: timestampFromDate(new Date("2025-03-01T12:00:00.123Z")),
    xml,
    xmlSha256: sha(xml),
    content: {
      case: "document",
      value: {
        chave,
        numero: String(n),
        versao: "1.01",
        cStat: 100,
        dhEmi: timestampFromDate(opts.dhEmi ?? new Date("2025-03-01T10:00:00Z")),
        dhProc: timestampFromDate(opts.dhEmi ?? new Date("2025-03-01T10:00:05Z")),
        competencia: opts.competencia ?? { year: 2025, month: 3, day: 1 },
        prestador: { document: { kind: TaxIdKind.CNPJ, number: opts.prestador ?? "11222333000181" }, name: "Padaria São João" },
        tomador: { document: { kind: TaxIdKind.CPF, number: opts.tomador ?? "12345678909" } },
        valores: { vServCents: 100000n, vLiqCents: 100000n, aliquotaBps: 200 },
        servico: { cTribNac: "010101", descricao: "Serviço de teste" },
      },
    },
  });
}

export function eventItem(
  nsu: number | bigint,
  chave: string,
  codigo: string,
  opts: { chaveSubstituta?: string; seq?: number } = {},
): DistributionItem {
  const id = eventIdOf(chave, codigo, opts.seq);
  const xml = Buffer.from(`<evento versao="1.01"><infEvento Id="${id}"><e${codigo}/></infEvento></evento>`, "utf8");
  const tipo =
    codigo === "101101"
      ? TipoEvento.CANCELAMENTO
      : codigo === "105102"
        ? TipoEvento.CANCELAMENTO_POR_SUBSTITUICAO
        : codigo === "101103"
          ? TipoEvento.SOLICITACAO_CANCELAMENTO_ANALISE_FISCAL
          : codigo === "105105"
            ? TipoEvento.CANCELAMENTO_INDEFERIDO_ANALISE_FISCAL
            : TipoEvento.UNKNOWN;
  return create(DistributionItemSchema, {
    nsu: BigInt(nsu),
    chave,
    tipoDocumento: "EVENTO",
    xml,
    xmlSha256: sha(xml),
    content: {
      case: "event",
      value: {
        id,
        chave,
        codigo,
        tipo,
        nSeqEvento: opts.seq ?? 1,
        dhEvento: timestampFromDate(new Date("2025-03-02T09:00:00Z")),
        dhProc: timestampFromDate(new Date("2025-03-02T09:00:01Z")),
        chaveSubstituta: opts.chaveSubstituta ?? "",
      },
    },
  });
}

export function faultItem(nsu: number | bigint, raw: Uint8Array, reason = FaultReason.BAD_GZIP): DistributionItem {
  return create(DistributionItemSchema, {
    nsu: BigInt(nsu),
    chave: "",
    tipoDocumento: "NFSE",
    content: { case: "fault", value: { reason, message: "unexpected end of gzip stream", rawPayload: raw } },
  });
}

export function storeClient(baseUrl: string) {
  return createServiceClient(StoreService, { baseUrl, defaultTimeoutMs: 30_000 });
}

/** Registers each municipality, active, with one DISTRIBUICAO feed of `ambiente`; its UF from its code unless given. */
export async function registerMunicipalities(
  client: Pick<Client<typeof StoreService>, "registerMunicipality">,
  municipalities: readonly { ibge: string; uf?: string }[],
  ambiente: Ambiente,
): Promise<void> {
  for (const m of municipalities) {
    await client.registerMunicipality({
      ibge: m.ibge,
      name: `Município ${m.ibge}`,
      uf: m.uf ?? ufOf(parseIbge(m.ibge)),
      active: true,
      feeds: [{ ambiente, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
}

/**
 * Registers each municipality (its UF from its code) with one PRODUCAO DISTRIBUICAO
 * feed and begins a scheduled run on it for `holder` with `fenceToken`; the run ids by IBGE code.
 */
export async function registerWithRuns(
  client: Client<typeof StoreService>,
  ibges: readonly string[],
  holder: string,
  fenceToken: bigint,
): Promise<Map<string, string>> {
  await registerMunicipalities(
    client,
    ibges.map((ibge) => ({ ibge })),
    Ambiente.PRODUCAO,
  );
  const runIds = new Map<string, string>();
  for (const ibge of ibges) {
    const begun = await client.beginRun({ feed: feedOf(ibge), holder, fenceToken, trigger: RunTrigger.SCHEDULED });
    runIds.set(ibge, begun.runId);
  }
  return runIds;
}

/** The rejection of a call, as a ConnectError (fails the test if the call succeeded). */
export async function rejection(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new ConnectError("expected the call to fail", Code.Unknown);
}
