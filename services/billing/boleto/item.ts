// From a Boleto of the contract to what libs/cobranca needs: the bank data for gerarBoleto and the
// FichaInput for the PDF. Pure; every refusal is a CobrancaError, which the worker turns into an item error.
import {
  buildPixEstatico,
  CobrancaError,
  documento,
  gerarBoleto,
  parsePix,
  type CalendarDate,
  type FichaInput,
  type PessoaFicha,
} from "../../../libs/cobranca/index.js";
import type { Boleto, ContaCobranca } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import type { Party } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { TaxIdKind } from "../../../libs/gen/malha/common/v1/common_pb.js";

export interface ItemContext {
  itemId: string;
  /** The job's creation date in America/Sao_Paulo: data do processamento and the PDF CreationDate. */
  dataProcessamento: CalendarDate;
  /** Allocated from the per-convênio sequence when the input has none. */
  nossoNumero?: string;
  /** Sandbox PDFs say they have no value. */
  sandbox: boolean;
}

export interface PreparedItem {
  ficha: FichaInput;
  result: {
    nossoNumero: string;
    nossoNumeroDv: string;
    nossoNumeroFormatado: string;
    linhaDigitavel: string;
    linhaDigitavelFormatada: string;
    codigoBarras: string;
    pixPayload: string;
  };
}

const toDate = (d: ProtoDate | undefined): CalendarDate | null => (d ? { year: d.year, month: d.month, day: d.day } : null);

function documentOf(p: Party | undefined, field: string): string {
  const doc = p?.document;
  if (!doc || doc.number === "") throw new CobrancaError("CAMPO_OBRIGATORIO", "CPF/CNPJ is required", `${field}.document.number`);
  if (doc.kind === TaxIdKind.NIF)
    throw new CobrancaError("CPF_CNPJ_INVALIDO", "a boleto needs a CPF or CNPJ, not a NIF", `${field}.document`);
  // checked here to name the contract's field; the PDF checks again under its own names
  documento(doc.number, `${field}.document.number`);
  return doc.number;
}

function pessoa(p: Party | undefined, field: string): PessoaFicha {
  const a = p?.address;
  const endereco = a ? [a.street, a.number, a.complement].filter((s) => s !== "").join(", ") : "";
  return {
    nome: p?.name ?? "",
    documento: documentOf(p, field),
    ...(endereco !== "" ? { endereco } : {}),
    ...(a?.district ? { bairro: a.district } : {}),
    ...(a?.cep ? { cep: a.cep } : {}),
    ...(a?.city ? { cidade: a.city } : {}),
    ...(a?.uf ? { uf: a.uf } : {}),
  };
}

function dados(conta: ContaCobranca | undefined, b: Pick<Boleto, "seuNumero" | "parcela">, nossoNumero: string) {
  if (!conta) throw new CobrancaError("CAMPO_OBRIGATORIO", "conta is required", "conta");
  const opt = (k: string, v: string) => (v !== "" ? { [k]: v } : {});
  // Every bank-side input the engine's tables name has a contract field; the campo livre of Itaú's
  // special carteiras carries the título's seu número.
  return {
    banco: conta.banco,
    nossoNumero,
    ...opt("agencia", conta.agencia),
    ...opt("conta", conta.conta),
    ...opt("carteira", conta.carteira),
    ...opt("convenio", conta.convenio),
    ...opt("posto", conta.posto),
    ...opt("modalidade", conta.modalidade),
    ...opt("ano", conta.ano),
    ...opt("byteGeracao", conta.byteGeracao),
    ...opt("codigoCliente", conta.codigoCliente),
    ...opt("tipoCobranca", conta.tipoCobranca),
    ...opt("emissao", conta.emissao),
    ...opt("ios", conta.ios),
    ...opt("produto", conta.produto),
    ...opt("seuNumero", b.seuNumero),
    ...opt("parcela", b.parcela),
  };
}

/** The item's nosso número as given or allocated; "" when it still has to be allocated. */
export const nossoNumeroOf = (b: Boleto, ctx: Pick<ItemContext, "nossoNumero">) =>
  b.nossoNumero !== "" ? b.nossoNumero : (ctx.nossoNumero ?? "");

export function prepareItem(b: Boleto, ctx: ItemContext): PreparedItem {
  const nn = nossoNumeroOf(b, ctx);
  if (nn === "") throw new CobrancaError("CAMPO_OBRIGATORIO", "nosso número is required", "nosso_numero");
  if (b.valorCents > BigInt(Number.MAX_SAFE_INTEGER)) throw new CobrancaError("VALOR_ACIMA_DO_LIMITE", "value too large", "valor_cents");
  const boleto = renameFields(() =>
    gerarBoleto({ dados: dados(b.conta, b, nn), vencimento: toDate(b.vencimento), valorCentavos: Number(b.valorCents) }),
  );
  const beneficiario = pessoa(b.beneficiario, "beneficiario");
  if (!beneficiario.endereco)
    throw new CobrancaError("CAMPO_OBRIGATORIO", "the beneficiário's address is printed by law", "beneficiario.address");
  let pix: string | undefined;
  if (b.pix?.kind.case === "chaveEstatica") {
    const k = b.pix.kind.value;
    pix = renameFields(() =>
      buildPixEstatico({
        chave: k.chave,
        nome: beneficiario.nome.slice(0, 25),
        cidade: (beneficiario.cidade ?? "").slice(0, 15),
        valorCentavos: boleto.valorCentavos,
        ...(k.txid !== "" ? { txid: k.txid } : {}),
      }),
    );
  } else if (b.pix?.kind.case === "payload") {
    const payload = b.pix.kind.value;
    renameFields(() => parsePix(payload));
    pix = payload;
  }
  const instrucoes = ctx.sandbox ? ["SANDBOX - SEM VALOR", ...b.instrucoes] : [...b.instrucoes];
  const ficha: FichaInput = {
    boleto,
    beneficiario: beneficiario as PessoaFicha & { endereco: string },
    pagador: pessoa(b.pagador, "pagador"),
    ...(b.sacadorAvalista ? { avalista: pessoa(b.sacadorAvalista, "sacador_avalista") } : {}),
    numeroDocumento: b.numeroDocumento || b.seuNumero || ctx.itemId,
    especieDocumento: b.especie || "DM",
    aceite: b.aceite ? "A" : "N",
    dataDocumento: toDate(b.emissao) ?? ctx.dataProcessamento,
    dataProcessamento: ctx.dataProcessamento,
    ...(b.localPagamento !== "" ? { localPagamento: b.localPagamento } : {}),
    instrucoes,
    ...(pix !== undefined ? { pix } : {}),
  };
  const printed = boleto.nossoNumeroImpresso;
  const dash = printed.lastIndexOf("-");
  return {
    ficha,
    result: {
      nossoNumero: nn,
      nossoNumeroDv: dash >= 0 ? printed.slice(dash + 1) : "",
      nossoNumeroFormatado: printed,
      linhaDigitavel: boleto.linhaDigitavel,
      linhaDigitavelFormatada: boleto.linhaDigitavelFormatada,
      codigoBarras: boleto.codigoBarras,
      pixPayload: pix ?? "",
    },
  };
}

/** cobranca names its inputs (dados.convenio, valorCentavos); the caller knows the contract's names. */
const FIELD_NAMES: [RegExp, string][] = [
  [/^dados\.seuNumero$/, "seu_numero"],
  [/^dados\.nossoNumero$/, "nosso_numero"],
  [/^dados\.byteGeracao$/, "conta.byte_geracao"],
  [/^dados\.codigoCliente$/, "conta.codigo_cliente"],
  [/^dados\.tipoCobranca$/, "conta.tipo_cobranca"],
  [/^dados\.parcela$/, "parcela"],
  [/^dados\./, "conta."],
  [/^valorCentavos$/, "valor_cents"],
  [/^vencimento$/, "vencimento"],
];

function renameFields<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof CobrancaError && e.field) {
      let field = e.field;
      for (const [re, to] of FIELD_NAMES) field = field.replace(re, to);
      throw new CobrancaError(e.code, e.message.replace(/^[A-Z_]+(?: \([^)]*\))?: /, ""), field, e.details ? { ...e.details } : undefined);
    }
    throw e;
  }
}
