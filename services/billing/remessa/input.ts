// From contract títulos to libs/cobranca's remessa inputs, and the file of one sub-batch. Pure: the NSA
// and the generation time are inputs, so the same sub-batch always gives the same bytes.
import {
  bancoAtribuiNossoNumero,
  CobrancaError,
  gerarRemessa,
  type Beneficiario,
  type CalendarDate,
  type ItemAgrupavel,
  type LocalDateTime,
  type Pessoa,
  type RemessaOutput,
  type SubLote,
  type Titulo,
} from "../../../libs/cobranca/index.js";
import { BaixaType, DescontoType, JurosType, MultaType, ProtestoType, type Boleto } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { CnabLayout, MovimentoRemessa } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import type { Party } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { stripTaxIdMask } from "../../../libs/tax-id/index.js";

/** The CNAB "identificação do título na empresa" holds 25 characters. */
export const MAX_REMESSA_ID = 25;

export const layoutNumber = (l: CnabLayout): 240 | 400 => (l === CnabLayout.CNAB_LAYOUT_400 ? 400 : 240);

export interface TituloAgrupavel extends ItemAgrupavel {
  position: number;
}

export function agrupavel(b: Boleto, id: string, position: number, layout: CnabLayout): TituloAgrupavel {
  const c = b.conta!;
  return {
    id,
    position,
    banco: c.banco,
    layout: layoutNumber(layout),
    convenio: c.convenio,
    carteira: c.carteira,
    conta: c.conta,
    agencia: c.agencia,
    variacao: c.variacaoCarteira,
    pix: b.pix !== undefined && b.pix.kind.case !== undefined,
    ...(b.nossoNumero !== "" ? { nossoNumero: b.nossoNumero } : {}),
  };
}

const cal = (d: ProtoDate | undefined): CalendarDate | undefined => (d ? { year: d.year, month: d.month, day: d.day } : undefined);

function pessoa(p: Party | undefined, field: string): Pessoa {
  const doc = p?.document?.number ?? "";
  if (!p || p.name === "") throw new CobrancaError("CAMPO_OBRIGATORIO", "name is required", `${field}.name`);
  const a = p.address;
  const endereco = a ? [a.street, a.number, a.complement].filter((s) => s !== "").join(" ") : "";
  return {
    nome: p.name,
    documento: doc,
    ...(endereco !== "" ? { endereco } : {}),
    ...(a?.district ? { bairro: a.district } : {}),
    ...(a?.cep ? { cep: a.cep } : {}),
    ...(a?.city ? { cidade: a.city } : {}),
    ...(a?.uf ? { uf: a.uf } : {}),
  };
}

// FEBRABAN 240 instruction codes (juros 1 valor/dia, 2 taxa mensal, 3 isento; multa 1 valor, 2 %;
// desconto 1 valor até a data, 2 % até a data, 3 valor por dia de antecipação; protesto 1 corridos,
// 2 úteis, 3 não protestar; baixa 1 baixar/devolver, 2 não baixar). CNAB 400 takes the bank's own codes:
// `codigosDoBanco400` translates where they differ; what a 400 detail cannot hold the writer refuses.
export function tituloOf(b: Boleto, id: string, movimento: MovimentoRemessa, emissaoPadrao: CalendarDate): Titulo {
  const vencimento = cal(b.vencimento);
  if (!vencimento) throw new CobrancaError("CAMPO_OBRIGATORIO", "a remessa título needs a vencimento", "vencimento");
  const banco = b.conta?.banco ?? "";
  // Inter (and C6) number the títulos they register: the remessa goes without it (decision 0033)
  if (bancoAtribuiNossoNumero(banco)) {
    if (b.nossoNumero !== "") throw new CobrancaError("CAMPO_INVALIDO", nossoNumeroDoBanco(banco), "nosso_numero");
  } else if (b.nossoNumero === "") throw new CobrancaError("CAMPO_OBRIGATORIO", "a remessa título needs its nosso número", "nosso_numero");
  if (b.valorCents > BigInt(Number.MAX_SAFE_INTEGER)) throw new CobrancaError("VALOR_ACIMA_DO_LIMITE", "value too large", "valor_cents");
  const j = b.juros;
  const m = b.multa;
  const d = b.descontos[0];
  return {
    id,
    ...(b.nossoNumero !== "" ? { nossoNumero: b.nossoNumero } : {}),
    ...(b.numeroDocumento || b.seuNumero ? { numeroDocumento: b.numeroDocumento || b.seuNumero } : {}),
    vencimento,
    emissao: cal(b.emissao) ?? emissaoPadrao,
    valorCentavos: Number(b.valorCents),
    ...(b.especie ? { especie: b.especie } : {}),
    aceite: b.aceite ? "A" : "N",
    movimento: String(movimento === MovimentoRemessa.UNSPECIFIED ? 1 : movimento).padStart(2, "0"),
    ...(j && j.type === JurosType.VALOR_POR_DIA
      ? { juros: { codigo: "1", valor: Number(j.valorDiaCents), ...(j.dataInicio ? { data: cal(j.dataInicio)! } : {}) } }
      : {}),
    ...(j && j.type === JurosType.TAXA_MENSAL
      ? { juros: { codigo: "2", valor: j.taxaMensalBps, ...(j.dataInicio ? { data: cal(j.dataInicio)! } : {}) } }
      : {}),
    ...(m && m.type === MultaType.VALOR
      ? { multa: { codigo: "1", valor: Number(m.valorCents), ...(m.dataInicio ? { data: cal(m.dataInicio)! } : {}) } }
      : {}),
    ...(m && m.type === MultaType.PERCENTUAL
      ? { multa: { codigo: "2", valor: m.percentualBps, ...(m.dataInicio ? { data: cal(m.dataInicio)! } : {}) } }
      : {}),
    ...(d && d.type === DescontoType.VALOR_ATE_DATA
      ? { desconto: { codigo: "1", valor: Number(d.valorCents), ...(d.dataLimite ? { data: cal(d.dataLimite)! } : {}) } }
      : {}),
    ...(d && d.type === DescontoType.PERCENTUAL_ATE_DATA
      ? { desconto: { codigo: "2", valor: d.percentualBps, ...(d.dataLimite ? { data: cal(d.dataLimite)! } : {}) } }
      : {}),
    ...(b.abatimentoCents > 0n ? { abatimentoCentavos: Number(b.abatimentoCents) } : {}),
    ...(b.protesto && b.protesto.type !== ProtestoType.UNSPECIFIED
      ? {
          protesto: {
            codigo: b.protesto.type === ProtestoType.DIAS_CORRIDOS ? "1" : b.protesto.type === ProtestoType.DIAS_UTEIS ? "2" : "3",
            dias: b.protesto.dias,
          },
        }
      : {}),
    ...(b.baixa && b.baixa.type !== BaixaType.UNSPECIFIED
      ? { baixa: { codigo: b.baixa.type === BaixaType.BAIXAR_DEVOLVER ? "1" : "2", dias: b.baixa.dias } }
      : {}),
    ...(b.instrucoes[0] ? { mensagem1: b.instrucoes[0] } : {}),
    pagador: pessoa(b.pagador, "pagador"),
    ...(b.sacadorAvalista ? { avalista: pessoa(b.sacadorAvalista, "sacador_avalista") } : {}),
    ...pixDoTitulo(b),
  };
}

/**
 * Why a caller's nosso número is refused for a bank that assigns its own: the file has zeros where it would
 * go and the bank registers another number, so a boleto printed from it would name a título the bank lacks.
 */
export const nossoNumeroDoBanco = (banco: string): string =>
  `bank ${banco} assigns the nosso número when it registers the título: send the título without one; the retorno brings the assigned number beside the título id (decision 0033)`;

/**
 * A remessa registers the boleto with the beneficiário's DICT key; the bank creates the charge and sends
 * its payload back in the retorno. A payload given here has no field to go to: refused, not dropped.
 */
function pixDoTitulo(b: Boleto): Pick<Titulo, "pix"> {
  const k = b.pix?.kind;
  if (k?.case === "chaveEstatica") return { pix: { chave: k.value.chave, ...(k.value.txid !== "" ? { txid: k.value.txid } : {}) } };
  if (k?.case === "payload")
    throw new CobrancaError(
      "CAMPO_INVALIDO",
      "a remessa registers PIX by the beneficiário's DICT key (pix.chave_estatica); the payload is what the bank returns",
      "pix.payload",
    );
  return {};
}

/** Santander CNAB 400 says "4" for a percent multa (its only kind) where FEBRABAN 240 says "2". */
export function codigosDoBanco400(t: Titulo, banco: string): Titulo {
  if (banco === "033" && t.multa?.codigo === "2") return { ...t, multa: { ...t.multa, codigo: "4" } };
  return t;
}

export function beneficiarioOf(b: Boleto): Beneficiario {
  const c = b.conta!;
  const p = b.beneficiario;
  return {
    nome: p?.name ?? "",
    documento: p?.document?.number ?? "",
    agencia: c.agencia,
    ...(c.agenciaDv ? { agenciaDv: c.agenciaDv } : {}),
    conta: c.conta,
    ...(c.contaDv ? { contaDv: c.contaDv } : {}),
    ...(c.convenio ? { convenio: c.convenio } : {}),
    ...(c.carteira ? { carteira: c.carteira } : {}),
    ...(c.variacaoCarteira ? { variacao: c.variacaoCarteira } : {}),
    ...(c.modalidade ? { modalidade: c.modalidade } : {}),
    ...(c.codigoTransmissao ? { codigoTransmissao: c.codigoTransmissao } : {}),
  };
}

const comparable = (v: string | undefined, field: keyof Beneficiario): string => {
  const t = (v ?? "").trim();
  if (field === "documento") return stripTaxIdMask(t);
  // the file carries names folded and upper-cased: differences of case and accents are not differences
  if (field === "nome") return t.normalize("NFD").replace(/\p{M}/gu, "").toUpperCase().replace(/\s+/g, " ");
  return t.replace(/^0+(?=\d)/, "");
};
/** What a remessa's header (or every detail) says of the beneficiário, and where the contract holds it. */
export const BENEFICIARIO_FIELD = {
  nome: "beneficiario.name",
  documento: "beneficiario.document.number",
  agencia: "conta.agencia",
  agenciaDv: "conta.agencia_dv",
  conta: "conta.conta",
  contaDv: "conta.conta_dv",
  convenio: "conta.convenio",
  carteira: "conta.carteira",
  variacao: "conta.variacao_carteira",
  modalidade: "conta.modalidade",
  codigoTransmissao: "conta.codigo_transmissao",
} as const satisfies Partial<Record<keyof Beneficiario, string>>;
type HeaderField = keyof typeof BENEFICIARIO_FIELD;
const HEADER_FIELDS = Object.keys(BENEFICIARIO_FIELD) as HeaderField[];

/** The first beneficiário field on which `b` names another beneficiário than `a`, if any. */
export function beneficiarioDivergente(a: Beneficiario, b: Beneficiario): HeaderField | undefined {
  return HEADER_FIELDS.find((f) => comparable(a[f] as string | undefined, f) !== comparable(b[f] as string | undefined, f));
}

/**
 * One file has one header: the beneficiário its sub-batch's títulos name most often (ties: the earliest),
 * computed from every título of the sub-batch so that a retry of the sub-batch writes the same header.
 */
export function beneficiarioDoSublote(beneficiarios: readonly Beneficiario[]): Beneficiario | undefined {
  const groups: { b: Beneficiario; n: number }[] = [];
  for (const b of beneficiarios) {
    const g = groups.find((x) => beneficiarioDivergente(x.b, b) === undefined);
    if (g) g.n++;
    else groups.push({ b, n: 1 });
  }
  return groups.reduce<{ b: Beneficiario; n: number } | undefined>((best, g) => (best === undefined || g.n > best.n ? g : best), undefined)
    ?.b;
}

export interface SubloteFileInput {
  chave: SubLote<TituloAgrupavel>["chave"];
  nsa: number;
  geradoEm: LocalDateTime;
  beneficiario: Beneficiario;
  titulos: Titulo[];
}

/** The remessa file of one sub-batch; the writer runs the structural checker before returning. */
export function gerarArquivoSublote(i: SubloteFileInput): RemessaOutput {
  return gerarRemessa({
    banco: i.chave.banco,
    layout: i.chave.layout,
    nsa: i.nsa,
    geradoEm: i.geradoEm,
    beneficiario: i.beneficiario,
    titulos: i.titulos,
  });
}

/** Checks one título alone, so a bad título fails itself and not its whole sub-batch. */
export function validarTitulo(
  chave: SubloteFileInput["chave"],
  beneficiario: Beneficiario,
  titulo: Titulo,
  geradoEm: LocalDateTime,
): CobrancaError | undefined {
  try {
    gerarRemessa({ banco: chave.banco, layout: chave.layout, nsa: 1, geradoEm, beneficiario, titulos: [titulo] });
    return undefined;
  } catch (e) {
    if (e instanceof CobrancaError) return e;
    throw e;
  }
}
