/**
 * BRB (070) remessa: the bank's own "DCB" file, version 077 (layouts-dcb.ts; decision 0027). A header,
 * then per título a record 01 and, when it has a sacador/avalista or a message, a record 02; no trailer.
 * The título's FEBRABAN codes become BRB's: juros as a 2-digit type, a desconto as type + value + date,
 * the multa as an instruction with its value at 378–385, the baixa as instruction 95 with its days.
 * What the records cannot carry is refused, naming the field, never dropped.
 */
import { nossoNumero } from "../campo-livre.js";
import { type CalendarDate, addDays, diffDays } from "../date.js";
import { CobrancaError, fail } from "../errors.js";
import { DCB_HEADER, DCB_REGISTRO_01, DCB_REGISTRO_02 } from "./layouts-dcb.js";
import { type RecordLayout, type Warning, decodeRecord, encodeRecord } from "./record.js";
import type { TituloCtx } from "./remessa.js";

type Ctx = Record<string, unknown>;

/** Espécies of the manual: duplicata mercantil, de serviço, nota promissória, cartão, proposta, outros. */
const ESPECIES = ["21", "22", "25", "31", "32", "39"];
/** Instructions that take no prazo or value: sem instrução, não dispensar juros, não cobrar juros, não receber após o vencimento. */
const INSTRUCOES_SIMPLES = ["00", "01", "08", "13"];
/** FEBRABAN juros code → BRB tipo de juros: 1 valor por dia → 12 (R$ ao dia), 2 taxa mensal → 21 (% ao mês). */
const TIPO_JUROS: Readonly<Record<string, string>> = { "0": "00", "1": "12", "2": "21", "3": "00" };
/** FEBRABAN multa code → BRB instruction: 1 valor → 02 (multa de R$), 2 percentual → 03 (multa de %). */
const INSTRUCAO_MULTA: Readonly<Record<string, string>> = { "1": "02", "2": "03" };
const BAIXAR_APOS_DIAS = "95";

const recusa = (campo: string, porque: string): never => fail("CAMPO_INVALIDO", `BRB remessa (DCB 077) ${porque}`, `titulo.${campo}`);

/** The beneficiário as the DCB file names it: agência (3) + conta (7), and the modalidade (carteira). */
function beneficiarioBrb(b: Ctx): Ctx {
  const agencia = String(b.agencia ?? "").replace(/^0+(?=\d{3})/, "");
  const conta = String(b.conta ?? "").replace(/^0+(?=\d{7})/, "");
  if (!/^\d{1,3}$/.test(agencia)) fail("CAMPO_EXCEDE_TAMANHO", "BRB's agência has 3 digits", "beneficiario.agencia", { max: 3 });
  if (!/^\d{1,7}$/.test(conta)) fail("CAMPO_EXCEDE_TAMANHO", "BRB's conta has 7 digits", "beneficiario.conta", { max: 7 });
  const carteira = String(b.carteira ?? "2");
  if (!/^[123]$/.test(carteira))
    fail(
      "CARTEIRA_INVALIDA",
      "BRB's modalidade (carteira) is 1 or 2 (printed by the beneficiário) or 3 (printed by BRB)",
      "beneficiario.carteira",
    );
  return { ...b, agencia, conta, carteira };
}

/** BRB's codes for one título, under `dcb` of its record context. */
function dcbDoTitulo(t: TituloCtx, b: Ctx): Ctx {
  let nn: ReturnType<typeof nossoNumero>;
  try {
    nn = nossoNumero({
      banco: "070",
      agencia: b.agencia as string,
      conta: b.conta as string,
      carteira: b.carteira as string,
      nossoNumero: t.nossoNumero ?? "",
    });
  } catch (e) {
    if (e instanceof CobrancaError && e.field === "nossoNumero")
      throw new CobrancaError(e.code, e.message, "titulo.nossoNumero", e.details);
    throw e;
  }
  const especie = t.especie ?? "21";
  if (!ESPECIES.includes(especie)) recusa("especie", `takes the espécies ${ESPECIES.join(", ")}, got ${JSON.stringify(especie)}`);
  const diaSeguinte = addDays(t.vencimento, 1);
  const depoisDoVencimento = (d: CalendarDate | undefined) => d === undefined || diffDays(d, diaSeguinte) === 0;

  const juros = t.juros && t.juros.codigo !== "0" && t.juros.codigo !== "3" ? t.juros : undefined;
  if (t.juros && !(t.juros.codigo in TIPO_JUROS))
    recusa("juros.codigo", `holds juros as a value per day (1) or a monthly rate (2), or none (0, 3), got code ${t.juros.codigo}`);
  if (juros && !depoisDoVencimento(juros.dataInformada)) recusa("juros.data", "charges juros from the day after the vencimento only");

  const desconto = t.desconto && t.desconto.codigo !== "0" ? t.desconto : undefined;
  if (desconto && desconto.codigo !== "1" && desconto.codigo !== "2")
    recusa("desconto.codigo", `holds a desconto as a value (1) or a rate (2) up to a date, got code ${desconto.codigo}`);

  const multa = t.multa && t.multa.codigo !== "0" ? t.multa : undefined;
  if (multa && !INSTRUCAO_MULTA[multa.codigo])
    recusa("multa.codigo", `holds a multa as a value (1) or a rate (2), got code ${multa.codigo}`);
  if (multa && !depoisDoVencimento(multa.dataInformada)) recusa("multa.data", "charges the multa from the day after the vencimento only");

  for (const k of ["instrucao1", "instrucao2"] as const) {
    const v = t[k];
    if (v !== undefined && !INSTRUCOES_SIMPLES.includes(v))
      recusa(
        k,
        `takes as a free instruction ${INSTRUCOES_SIMPLES.join(", ")} (the others need a prazo or value), got ${JSON.stringify(v)}`,
      );
  }
  const baixa = t.baixa && t.baixa.codigo === "1" ? t.baixa : undefined;
  if (t.baixa && t.baixa.codigo !== "1" && t.baixa.codigo !== "2")
    recusa("baixa.codigo", `has baixar após dias (1) or no baixa (2), got code ${t.baixa.codigo}`);
  if (baixa && t.instrucao2 !== undefined && t.instrucao2 !== "00")
    recusa("instrucao2", "writes the baixa as the second instruction (95): send one or the other");
  const diasBaixa = baixa?.dias ?? 0;
  if (baixa && (!Number.isInteger(diasBaixa) || diasBaixa < 0 || diasBaixa > 999)) recusa("baixa.dias", "baixa days are 0–999");

  const protesta = t.protesto && t.protesto.codigo !== "3";
  if (protesta && t.protesto!.codigo !== "1")
    recusa("protesto.codigo", `counts protest days as calendar days (code 1) only, got code ${t.protesto!.codigo}`);
  const diasProtesto = protesta ? (t.protesto!.dias ?? 0) : 0;
  if (protesta && (!Number.isInteger(diasProtesto) || diasProtesto < 1 || diasProtesto > 999))
    recusa("protesto.dias", "protests after 1–999 days");

  const modalidadeBrb = b.carteira === "3";
  return {
    incremento: nn.valores.incremento,
    nossoNumero: nn.completo,
    especie,
    // modalidade 3 is printed and posted by BRB (the manual's default for it); 1 and 2 by the beneficiário
    impressao: modalidadeBrb ? "1" : "2",
    distribuicao: modalidadeBrb ? "2" : "0",
    // until the vencimento at any bank, after it at BRB only
    localPagamento: "01",
    tipoJuros: juros ? TIPO_JUROS[juros.codigo] : "00",
    valorJuros: juros?.valor ?? 0,
    tipoDesconto: desconto ? desconto.codigo : "0",
    valorDesconto: desconto?.valor ?? 0,
    dataDesconto: desconto ? (desconto.data ?? t.vencimento) : undefined,
    instrucao1: t.instrucao1 ?? "00",
    prazoInstrucao1: 0,
    instrucao2: baixa ? BAIXAR_APOS_DIAS : (t.instrucao2 ?? "00"),
    prazoInstrucao2: diasBaixa,
    instrucao3: multa ? INSTRUCAO_MULTA[multa.codigo] : "00",
    prazoInstrucao3: 0,
    valorInstrucao: multa?.valor ?? 0,
    prazoProtesto: diasProtesto,
  };
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * A DCB writer for one beneficiário: the records of each título (01, and 02 when it has a sacador/avalista
 * or a message), then the header once the record count is known. The caller numbers the títulos' errors.
 */
export function escritorBrb(beneficiarioIn: Ctx, warnings: Warning[]) {
  const beneficiario = beneficiarioBrb(beneficiarioIn);
  return {
    registros(t: TituloCtx): string[] {
      if (t.pix) recusa("pix", "has no PIX record: send the título without PIX");
      if (t.movimento !== "01")
        recusa("movimento", `record 01 is an entry (movimento 01); other commands are BRB's "Comandos" file, got ${t.movimento}`);
      const ctx: Ctx = { beneficiario, titulo: t, pagador: t.pagador, avalista: t.avalista, dcb: dcbDoTitulo(t, beneficiario) };
      const out = [encodeRecord(DCB_REGISTRO_01, ctx, warnings, "")];
      if (t.avalista || t.mensagem1) out.push(encodeRecord(DCB_REGISTRO_02, ctx, warnings, ""));
      return out;
    },
    /** `registros` counts the header too ("Informar a quantidade Header+Registros"). */
    header(arquivo: Ctx, registros: number): string {
      const d = arquivo.data as CalendarDate;
      const a = { ...arquivo, aaaammdd: `${d.year}${pad2(d.month)}${pad2(d.day)}`, registros };
      return encodeRecord(DCB_HEADER, { beneficiario, arquivo: a }, warnings, "header");
    },
  };
}

/** "DCB" at column 1 marks BRB's remessa: no CNAB header has it. */
export const isDcb = (firstLine: string) => firstLine.startsWith("DCB");

export interface RemessaBrbLida {
  readonly data?: CalendarDate;
  readonly beneficiario: Record<string, unknown>;
  readonly titulos: Record<string, unknown>[];
  readonly records: { layout: RecordLayout; raw: Record<string, string> }[];
}

const FEBRABAN_JUROS: Readonly<Record<string, string>> = { "12": "1", "21": "2" };
const FEBRABAN_MULTA: Readonly<Record<string, string>> = { "02": "1", "03": "2" };

/** Read a DCB remessa back into títulos of the writer's shape (nosso número = incremento + sequencial). */
export function lerRemessaBrb(lines: readonly string[], warnings: Warning[]): RemessaBrbLida {
  const records: { layout: RecordLayout; raw: Record<string, string> }[] = [];
  const titulos: Record<string, unknown>[] = [];
  let beneficiario: Record<string, unknown> = {};
  let data: CalendarDate | undefined;
  lines.forEach((l, i) => {
    const layout = i === 0 ? DCB_HEADER : l.startsWith("01") ? DCB_REGISTRO_01 : l.startsWith("02") ? DCB_REGISTRO_02 : undefined;
    if (!layout) {
      warnings.push({ code: "REGISTRO_IGNORADO", field: `linha ${i + 1}`, message: `record type ${l.slice(0, 2)} not read` });
      return;
    }
    const d = decodeRecord(layout, l, warnings, i + 1);
    records.push({ layout, raw: d.raw });
    if (layout === DCB_HEADER) {
      const codigo = String((d.data.beneficiario as Ctx | undefined)?.codigoBeneficiario ?? "").padStart(10, "0");
      beneficiario = { codigoBeneficiario: codigo, agencia: codigo.slice(0, 3), conta: codigo.slice(3) };
      const a = String((d.data.arquivo as Ctx | undefined)?.aaaammdd ?? "");
      if (/^\d{8}$/.test(a)) data = { year: Number(a.slice(0, 4)), month: Number(a.slice(4, 6)), day: Number(a.slice(6)) };
    } else if (layout === DCB_REGISTRO_01) titulos.push(tituloLido(d.data));
    else if (titulos.length) {
      const t = titulos[titulos.length - 1]!;
      if (d.data.avalista) t.avalista = d.data.avalista;
      const m = (d.data.titulo as Ctx | undefined)?.mensagem1;
      if (m !== undefined) t.mensagem1 = m;
    }
  });
  return { ...(data ? { data } : {}), beneficiario, titulos, records };
}

function tituloLido(data: Record<string, unknown>): Record<string, unknown> {
  const t = { ...((data.titulo as Ctx) ?? {}) };
  const dcb = (data.dcb as Record<string, string | number | CalendarDate | undefined>) ?? {};
  const nn = String(dcb.nossoNumero ?? "");
  const out: Record<string, unknown> = {
    ...t,
    nossoNumero: `${String(dcb.incremento ?? "000").padStart(3, "0")}${nn.slice(1, 7)}`,
    nossoNumeroBrb: nn,
    modalidade: nn.slice(0, 1),
    especie: dcb.especie,
    impressao: dcb.impressao,
    distribuicao: dcb.distribuicao,
    localPagamento: dcb.localPagamento,
    pagador: data.pagador,
  };
  const tipoJuros = String(dcb.tipoJuros ?? "00");
  if (FEBRABAN_JUROS[tipoJuros]) out.juros = { codigo: FEBRABAN_JUROS[tipoJuros], valor: dcb.valorJuros ?? 0 };
  else if (tipoJuros !== "00") out.tipoJurosBrb = tipoJuros;
  const tipoDesconto = String(dcb.tipoDesconto ?? "0");
  if (tipoDesconto !== "0") out.desconto = { codigo: tipoDesconto, valor: dcb.valorDesconto ?? 0, data: dcb.dataDesconto };
  const instrucoes = [1, 2, 3].map((k) => [String(dcb[`instrucao${k}`] ?? "00"), Number(dcb[`prazoInstrucao${k}`] ?? 0)] as const);
  for (const [codigo, prazo] of instrucoes) {
    if (FEBRABAN_MULTA[codigo]) out.multa = { codigo: FEBRABAN_MULTA[codigo], valor: dcb.valorInstrucao ?? 0 };
    else if (codigo === BAIXAR_APOS_DIAS) out.baixa = { codigo: "1", dias: prazo };
  }
  out.instrucoes = instrucoes.filter(([c]) => c !== "00").map(([codigo, prazo]) => ({ codigo, prazo }));
  const protesto = Number(dcb.prazoProtesto ?? 0);
  if (protesto > 0) out.protesto = { codigo: "1", dias: protesto };
  return out;
}
