/**
 * Remessa writers (CNAB 240 and 400) and the matching readers. Input → context → records from the
 * layout tables → structural check → bytes. Timestamps and the NSA are inputs; nothing reads a clock.
 */
import { CHECK_DIGITS, type CheckDigitAlgorithm } from "../checkdigits.js";
import { assertValorCentavos } from "../boleto.js";
import { bancoAtribuiNossoNumero } from "../banks.js";
import { getBank, nossoNumero } from "../campo-livre.js";
import { type CalendarDate, type LocalDateTime, addDays, assertDate } from "../date.js";
import { CobrancaError, fail } from "../errors.js";
import { tipoChavePix } from "../pix.js";
import { cnabText, documento, foldAscii, onlyDigits } from "../text.js";
import { assertCnab, type CheckResult, splitLines } from "./checker.js";
import { type Cnab240Profile, layout240, profile240 } from "./layouts240.js";
import {
  BB_400_DETALHE,
  BB_400_HEADER,
  BRADESCO_400_DETALHE,
  BRADESCO_400_HEADER,
  CRESOL_400_DETALHE,
  ITAU_400_DETALHE,
  ITAU_400_HEADER,
  ITAU_400_MULTA,
  SANTANDER_400_DETALHE,
  SANTANDER_400_HEADER,
  SANTANDER_400_PIX_REMESSA,
  SANTANDER_400_TRAILER,
  INTER_400_DETALHE,
  INTER_400_HEADER,
  INTER_400_TRAILER,
  SAFRA_400_DETALHE,
  SAFRA_400_HEADER,
  SAFRA_400_TRAILER,
  TRAILER_400,
  BNB_400_DETALHE,
  BNB_400_HEADER,
  UNICRED_400_DETALHE,
  UNICRED_400_HEADER,
} from "./layouts400.js";
import { type RecordLayout, type Warning, decodeRecord, encodeRecord, getPath } from "./record.js";
import { escritorBrb, isDcb, lerRemessaBrb } from "./remessa-brb.js";

export interface Beneficiario {
  readonly nome: string;
  /** CPF or CNPJ, punctuation allowed. */
  readonly documento: string;
  readonly agencia: string;
  readonly agenciaDv?: string;
  readonly conta: string;
  readonly contaDv?: string;
  readonly agenciaContaDv?: string;
  /** Convênio / código da empresa / código do beneficiário, per bank. */
  readonly convenio?: string;
  readonly carteira?: string;
  readonly variacao?: string;
  /** Carteira code of CNAB 240 P 58 / Itaú 400 col 108. */
  readonly codigoCarteira?: string;
  readonly modalidade?: string;
  /** Santander: código de transmissão (15 digits in CNAB 240, 20 in CNAB 400). */
  readonly codigoTransmissao?: string;
  /** Banco do Brasil CNAB 400: convênio líder (header 130–136), optional. */
  readonly convenioLider?: string;
  /** Banco do Brasil CNAB 400 tipo de cobrança (102–106): 04DSC, 08VDR, 02VIN; absent for cobrança simples. */
  readonly tipoCobranca?: string;
  /** Caixa: versão do aplicativo (header de arquivo 212–215). */
  readonly versaoAplicativo?: string;
}

export interface Pessoa {
  readonly nome: string;
  readonly documento: string;
  readonly endereco?: string;
  readonly bairro?: string;
  readonly cep?: string;
  readonly cidade?: string;
  readonly uf?: string;
}

export interface Encargo {
  /** Bank code of the charge type (e.g. juros 1 valor/dia, 2 taxa, 3 isento; multa 1 valor, 2 %). */
  readonly codigo: string;
  readonly data?: CalendarDate;
  /** Cents, or a rate × 100 when the code says percent. */
  readonly valor?: number;
}

/** PIX registered with the boleto: the beneficiário's DICT key and, optionally, the txid of the charge. */
export interface TituloPix {
  /** CPF or CNPJ (digits), +55 phone, e-mail or random key (EVP), ≤ 77 characters. */
  readonly chave: string;
  /** 1–35 of [A-Za-z0-9]; absent = the bank assigns one. */
  readonly txid?: string;
}

export interface Titulo {
  /** Our boleto id (≤ 25 chars): P 196–220 / 400 38–62, echoed back in the retorno. */
  readonly id: string;
  /**
   * Bank-level sequential nosso número (digits, without DV). Absent, and refused when given, for a bank that
   * assigns it at registration (BankDef.atribuiNossoNumero: Inter's remessa leaves it zero; decision 0033).
   */
  readonly nossoNumero?: string;
  readonly numeroDocumento?: string;
  readonly vencimento: CalendarDate;
  readonly emissao: CalendarDate;
  readonly valorCentavos: number;
  readonly especie?: string;
  readonly aceite?: "A" | "N";
  /** Código de movimento remessa (default 01 = entrada). */
  readonly movimento?: string;
  readonly juros?: Encargo;
  readonly desconto?: Encargo;
  readonly multa?: Encargo;
  readonly iofCentavos?: number;
  readonly abatimentoCentavos?: number;
  readonly protesto?: { readonly codigo: string; readonly dias?: number };
  readonly baixa?: { readonly codigo: string; readonly dias?: number };
  readonly instrucao1?: string;
  readonly instrucao2?: string;
  readonly parcela?: string;
  readonly mensagem1?: string;
  readonly pagador: Pessoa;
  readonly avalista?: Pessoa;
  /** Boleto with PIX (Bolepix): written where the bank's layout has a PIX record, refused elsewhere. */
  readonly pix?: TituloPix;
}

export interface RemessaInput {
  readonly banco: string;
  readonly layout: 240 | 400;
  /** Número sequencial do arquivo, allocated by the caller (never reused). */
  readonly nsa: number;
  /** Generation timestamp (São Paulo wall time), injected. */
  readonly geradoEm: LocalDateTime;
  readonly beneficiario: Beneficiario;
  readonly titulos: readonly Titulo[];
  /** Check CPF/CNPJ check digits (default true). */
  readonly validarDocumentos?: boolean;
}

export interface RemessaOutput {
  readonly bytes: Uint8Array;
  readonly text: string;
  readonly records: number;
  readonly warnings: readonly Warning[];
  readonly check: CheckResult;
}

/**
 * A CNAB 400 detail has fixed slots: juros only as a value per day (no code), desconto as a value up to a
 * date, and per bank a multa code, dates, protest days, an avalista. Codes are the bank's own (Titulo).
 */
interface Aceita400 {
  /** juros codes: "1" = value per day (the only kind the slot holds), "3" = isento (no value). */
  readonly jurosData: boolean;
  /** Multa codes the bank's field takes; undefined = no multa slot at all. */
  readonly multaCodigos?: readonly string[];
  readonly multaData: boolean;
  readonly protesto: boolean;
  readonly avalista: boolean;
  /** Whether `extras` holds the bank's PIX record. */
  readonly pix: boolean;
}

interface Cnab400Profile {
  readonly banco: string;
  readonly bancoNome: string;
  readonly header: RecordLayout;
  readonly detalhe: RecordLayout;
  /** First byte of the detail record: 1, or 7 for Banco do Brasil CBR641. */
  readonly detalheTipo: string;
  /** Checks and derives what this bank's layout needs of the beneficiário (DVs, complements). */
  readonly beneficiario?: (b: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /** What of a título's charges and instructions the detail can carry; the rest is refused, never dropped. */
  readonly aceita: Aceita400;
  /** Optional records after the detail, emitted when the context has a value at `when`. */
  readonly extras: readonly { readonly layout: RecordLayout; readonly when: string }[];
  readonly trailer: RecordLayout;
  /** NN check digit written beside the NN, as data. */
  readonly nossoNumeroDv?: { readonly algo: CheckDigitAlgorithm; readonly tpl: readonly [string, number][] };
  readonly nossoNumeroLen: number;
  /** Written after the last record's line end: BNB's manual ends the file with the DOS end-of-file byte. */
  readonly fimDeArquivo?: string;
  /** The bank's own codes derived from the título's (FEBRABAN 240) ones, at `titulo.codigos400`. */
  readonly codigos?: (t: ReturnType<typeof tituloCtx>) => Record<string, string>;
}

const BRADESCO_400: Cnab400Profile = {
  banco: "237",
  bancoNome: "BRADESCO",
  header: BRADESCO_400_HEADER,
  detalhe: BRADESCO_400_DETALHE,
  extras: [],
  trailer: TRAILER_400,
  nossoNumeroDv: {
    algo: "mod11Bradesco",
    tpl: [
      ["beneficiario.carteira", 2],
      ["titulo.nossoNumero", 11],
    ],
  },
  nossoNumeroLen: 11,
  detalheTipo: "1",
  aceita: { jurosData: false, multaCodigos: ["0", "2"], multaData: false, protesto: false, avalista: true, pix: false },
};

export const CNAB400_PROFILES: Readonly<Record<string, Cnab400Profile>> = {
  "237": BRADESCO_400,
  // Cresol: Bradesco's CNAB 400 with bank 133 (cobranca.md §3.13); the same slots, so the same refusals
  "133": { ...BRADESCO_400, banco: "133", bancoNome: "CRESOL", detalhe: CRESOL_400_DETALHE },
  "341": {
    banco: "341",
    bancoNome: "BANCO ITAU SA",
    header: ITAU_400_HEADER,
    detalhe: ITAU_400_DETALHE,
    extras: [{ layout: ITAU_400_MULTA, when: "titulo.multa" }],
    trailer: TRAILER_400,
    nossoNumeroLen: 8,
    detalheTipo: "1",
    aceita: { jurosData: true, multaCodigos: ["0", "1", "2"], multaData: true, protesto: true, avalista: true, pix: false },
  },
  "001": {
    banco: "001",
    bancoNome: "BANCODOBRASIL",
    header: BB_400_HEADER,
    detalhe: BB_400_DETALHE,
    extras: [],
    trailer: TRAILER_400,
    // convênio (7) + sequence (10) is the nosso número; CBR641 gives it no check digit
    nossoNumeroLen: 10,
    detalheTipo: "7",
    beneficiario: beneficiarioBB400,
    // the multa would need BB's type-5 record, which is not written; 352–391 hold the message
    aceita: { jurosData: false, multaData: false, protesto: true, avalista: false, pix: false },
  },
  "136": {
    banco: "136",
    bancoNome: "UNICRED",
    header: UNICRED_400_HEADER,
    detalhe: UNICRED_400_DETALHE,
    extras: [],
    trailer: TRAILER_400,
    nossoNumeroDv: { algo: "mod11S", tpl: [["titulo.nossoNumeroSequencial", 10]] },
    nossoNumeroLen: 10,
    detalheTipo: "1",
    beneficiario: beneficiarioUnicred400,
    codigos: codigosUnicred400,
    // no date fields for juros or multa; protesto code 1/2/3 + days; the avalista's name at 357–394
    aceita: { jurosData: false, multaCodigos: ["0", "1", "2"], multaData: false, protesto: true, avalista: true, pix: false },
  },
  "004": {
    banco: "004",
    bancoNome: "B. DO NORDESTE",
    header: BNB_400_HEADER,
    detalhe: BNB_400_DETALHE,
    extras: [],
    trailer: TRAILER_400,
    nossoNumeroDv: { algo: "mod11BNB", tpl: [["titulo.nossoNumeroSequencial", 7]] },
    nossoNumeroLen: 7,
    detalheTipo: "1",
    beneficiario: beneficiarioBnb400,
    codigos: codigosBnb400,
    fimDeArquivo: "\x1a",
    // multa as a percentage only (code 2); no dates for juros or multa; protest by days; the avalista at 352–391
    aceita: { jurosData: false, multaCodigos: ["0", "2"], multaData: false, protesto: true, avalista: true, pix: false },
  },
  "422": {
    banco: "422",
    bancoNome: "BANCO SAFRA",
    header: SAFRA_400_HEADER,
    detalhe: SAFRA_400_DETALHE,
    extras: [],
    trailer: SAFRA_400_TRAILER,
    nossoNumeroDv: { algo: "mod11Safra", tpl: [["titulo.nossoNumeroSequencial", 8]] },
    nossoNumeroLen: 8,
    detalheTipo: "1",
    beneficiario: beneficiarioSafra400,
    codigos: codigosSafra400,
    // multa as a rate from a date (instrução 16); protest by days (instrução 10); the avalista at 352–381
    aceita: { jurosData: false, multaCodigos: ["0", "2"], multaData: true, protesto: true, avalista: true, pix: false },
  },
  "077": {
    banco: "077",
    bancoNome: "INTER",
    header: INTER_400_HEADER,
    detalhe: INTER_400_DETALHE,
    extras: [],
    trailer: INTER_400_TRAILER,
    // zeros in the remessa: Inter writes the number it assigned in the retorno (decision 0033)
    nossoNumeroLen: 0,
    detalheTipo: "1",
    beneficiario: beneficiarioInter400,
    codigos: codigosInter400,
    // multa and juros with their dates; no protest, baixa or sacador/avalista slot in records 1 and 2
    aceita: { jurosData: true, multaCodigos: ["0", "1", "2"], multaData: true, protesto: false, avalista: false, pix: false },
  },
  "033": {
    banco: "033",
    bancoNome: "SANTANDER",
    header: SANTANDER_400_HEADER,
    detalhe: SANTANDER_400_DETALHE,
    extras: [{ layout: SANTANDER_400_PIX_REMESSA, when: "titulo.pix" }],
    trailer: SANTANDER_400_TRAILER,
    nossoNumeroDv: { algo: "mod11S", tpl: [["titulo.nossoNumeroSequencial", 7]] },
    nossoNumeroLen: 7,
    detalheTipo: "1",
    beneficiario: beneficiarioSantander400,
    aceita: { jurosData: false, multaCodigos: ["0", "4"], multaData: true, protesto: true, avalista: true, pix: true },
  },
};

/** Inter identifies the account by carteira, agência 0001 and the conta corrente PJ with its DV (10 digits, 21–37). */
function beneficiarioInter400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // beneficiarioCtx has checked that the agência is digits
  if (Number(b.agencia) !== 1) fail("CAMPO_INVALIDO", "Inter's agência is 0001 (Manual CNAB400 v1.1 §4.2)", "beneficiario.agencia");
  if (b.carteira !== undefined && !/^\d{3}$/.test(String(b.carteira)))
    fail("CARTEIRA_INVALIDA", "Inter's carteira has 3 digits (the manual's 112)", "beneficiario.carteira");
  const dv = b.contaDv as string | undefined;
  if (dv !== undefined && dv !== "" && !/^\d$/.test(dv)) fail("CAMPO_INVALIDO", "conta DV must be one digit", "beneficiario.contaDv");
  const contaComDv = `${String(b.conta)}${dv ?? ""}`;
  if (contaComDv.replace(/^0+(?=\d)/, "").length > 10)
    fail("CAMPO_EXCEDE_TAMANHO", "Inter's conta corrente with its DV has at most 10 digits", "beneficiario.conta", { max: 10 });
  return { contaComDv };
}

/**
 * Inter's codes (Manual CNAB400 v1.1 §4.2): multa 0/1 valor fixo/2 percentual, with the value in 67–79 or the
 * rate in 80–83; juros/mora 0 or 1 valor por dia; desconto 0 or 1 valor fixo até a data, whose date is required.
 */
function codigosInter400(t: ReturnType<typeof tituloCtx>): Record<string, string> {
  const out: Record<string, string> = { multa: "0", juros: t.juros?.codigo === "1" ? "1" : "0", desconto: t.desconto ? "1" : "0" };
  const m = t.multa;
  if (m && m.codigo !== "0") {
    out.multa = m.codigo;
    out[m.codigo === "1" ? "multaValor" : "multaPercentual"] = String(m.valor ?? 0);
  } else if (m && (m.valor || m.data))
    fail("CAMPO_INVALIDO", "INTER CNAB 400 writes no multa value or date for code 0: leave them out", "titulo.multa");
  if (t.juros && out.juros === "0" && t.juros.data)
    fail("CAMPO_INVALIDO", `INTER CNAB 400 writes no juros date for code ${t.juros.codigo}: leave it out`, "titulo.juros.data");
  if (t.desconto && !t.desconto.data)
    fail("CAMPO_OBRIGATORIO", "INTER CNAB 400 needs the desconto's limit date (202–207)", "titulo.desconto.data");
  return out;
}

/** Unicred identifies the account by its código do beneficiário and needs the agência and conta DVs. */
function beneficiarioUnicred400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (b.convenio === undefined || !/^\d{1,20}$/.test(String(b.convenio)))
    fail("CAMPO_OBRIGATORIO", "Unicred CNAB 400 needs the código do beneficiário (up to 20 digits)", "beneficiario.convenio");
  for (const k of ["agenciaDv", "contaDv"] as const)
    if (typeof b[k] !== "string" || !/^\d$/.test(b[k] as string))
      fail(
        "CAMPO_OBRIGATORIO",
        `Unicred CNAB 400 needs the ${k === "agenciaDv" ? "agência" : "conta"} DV (one digit)`,
        `beneficiario.${k}`,
      );
  if (b.carteira !== undefined && b.carteira !== "21")
    fail("CARTEIRA_INVALIDA", "Unicred registers carteira 21 only", "beneficiario.carteira");
  return {};
}

/**
 * Unicred's slots hold type codes (remessa §5.5.4): multa 1 valor, 2 taxa, 3 isento; mora 1 valor diário,
 * 5 isento; desconto 0 isento, 1 valor fixo. The título's FEBRABAN codes map onto them.
 */
function codigosUnicred400(t: ReturnType<typeof tituloCtx>): Record<string, string> {
  return {
    multa: !t.multa || t.multa.codigo === "0" ? "3" : t.multa.codigo,
    mora: t.juros?.codigo === "1" ? "1" : "5",
    desconto: t.desconto ? "1" : "0",
  };
}

/** BNB's header and detail carry agência, conta (7) and its DV. */
function beneficiarioBnb400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  digits(b.agencia as string, "beneficiario.agencia", 4);
  digits(b.conta as string, "beneficiario.conta", 7);
  if (typeof b.contaDv !== "string" || !/^\d$/.test(b.contaDv))
    fail("CAMPO_OBRIGATORIO", "Banco do Nordeste CNAB 400 needs the conta DV (one digit)", "beneficiario.contaDv");
  if (b.codigoCarteira !== undefined && !/^[1245]$/.test(String(b.codigoCarteira)))
    fail("CAMPO_INVALIDO", "BNB carteira code must be 1, 2, 4 or 5 (nota 2; I is sem registro)", "beneficiario.codigoCarteira");
  return {};
}

/**
 * BNB's multa slot (32–33) is a whole percentage; protesto days 99 mean "do not protest"; the
 * instruction code is 4 digits (nota 7).
 */
function codigosBnb400(t: ReturnType<typeof tituloCtx>): Record<string, string> {
  const out: Record<string, string> = { prazoProtesto: "99" };
  if (t.multa && t.multa.codigo !== "0") {
    const v = t.multa.valor ?? 0;
    if (v % 100 !== 0 || v > 9900)
      fail("CAMPO_INVALIDO", "Banco do Nordeste CNAB 400 holds the multa as a whole percentage (0–99 %)", "titulo.multa.valor");
    out.multaPercentual = String(v / 100);
  }
  if (t.protesto && t.protesto.codigo !== "3") {
    const d = t.protesto.dias ?? 0;
    if (!Number.isInteger(d) || d < 1 || d > 98)
      fail("CAMPO_INVALIDO", "Banco do Nordeste protests after 1–98 days (99 = do not protest)", "titulo.protesto.dias");
    out.prazoProtesto = String(d);
  }
  return out;
}

/** Safra identifies the empresa by agência and conta de cobrança, each with its DV. */
function beneficiarioSafra400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  digits(b.agencia as string, "beneficiario.agencia", 4);
  digits(b.conta as string, "beneficiario.conta", 8);
  for (const k of ["agenciaDv", "contaDv"] as const)
    if (typeof b[k] !== "string" || !/^\d$/.test(b[k] as string))
      fail("CAMPO_OBRIGATORIO", `Safra CNAB 400 needs the ${k === "agenciaDv" ? "agência" : "conta"} DV (one digit)`, `beneficiario.${k}`);
  if (b.codigoCarteira !== undefined && !/^[12]$/.test(String(b.codigoCarteira)))
    fail("CARTEIRA_INVALIDA", "Safra carteira code must be 1 (simples) or 2 (vinculada)", "beneficiario.codigoCarteira");
  return {};
}

const ddmmaa = (d: CalendarDate) => `${pad2(d.day)}${pad2(d.month)}${pad2(d.year % 100)}`;

/**
 * Safra's instructions (notas 6.1.5/6.1.6/6.1.8): a multa is instrução 1 = 16 with its date and rate in the
 * abatimento field, so a título cannot carry both at entry; a protest is instrução 2 = 10 with its days at 106–107.
 */
function codigosSafra400(t: ReturnType<typeof tituloCtx>): Record<string, string> {
  const multa = t.multa && t.multa.codigo !== "0" ? t.multa : undefined;
  const protesta = t.protesto && t.protesto.codigo !== "3";
  if (multa && t.abatimentoCentavos)
    fail("CAMPO_INVALIDO", "Safra CNAB 400 carries the multa in the abatimento field: send one or the other", "titulo.abatimentoCentavos");
  if (multa && (t.instrucao1 ?? "00") !== "00" && t.instrucao1 !== "16")
    fail("CAMPO_INVALIDO", "Safra CNAB 400 writes the multa as the first instruction (16)", "titulo.instrucao1");
  const valor = multa?.valor ?? 0;
  if (multa && (valor < 1 || valor > 9999)) fail("CAMPO_INVALIDO", "Safra's multa rate is 0,01–99,99 %", "titulo.multa.valor");
  let instrucao2 = t.instrucao2 ?? "00";
  let instrucao3 = "00";
  if (protesta) {
    const d = t.protesto!.dias ?? 0;
    if (!Number.isInteger(d) || d < 1 || d > 99) fail("CAMPO_INVALIDO", "Safra protests after 1–99 days", "titulo.protesto.dias");
    if (instrucao2 !== "00" && instrucao2 !== "10")
      fail("CAMPO_INVALIDO", "Safra CNAB 400 writes the protest as the second instruction (10)", "titulo.instrucao2");
    instrucao2 = "10";
    instrucao3 = String(d);
  }
  return {
    instrucao1: multa ? "16" : (t.instrucao1 ?? "00"),
    instrucao2,
    instrucao3,
    abatimentoOuMulta: multa ? `${ddmmaa(multa.data!)}${String(valor).padStart(4, "0")}000` : String(t.abatimentoCentavos ?? 0),
  };
}

/** CBR641 is the layout of 7-digit convênios; agência and conta DVs are BB's modulo 11 unless given. */
function beneficiarioBB400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const convenio = b.convenio as string | undefined;
  if (convenio === undefined || !/^\d{7}$/.test(convenio))
    fail("CONVENIO_INVALIDO", "Banco do Brasil CNAB 400 (CBR641) is written for 7-digit convênios", "beneficiario.convenio");
  if (b.convenioLider !== undefined && !/^\d{1,7}$/.test(String(b.convenioLider)))
    fail("CONVENIO_INVALIDO", "convênio líder must be up to 7 digits", "beneficiario.convenioLider");
  digits(b.carteira as string | undefined, "beneficiario.carteira", 2);
  digits(b.variacao as string | undefined, "beneficiario.variacao", 3);
  digits(b.conta as string, "beneficiario.conta", 8);
  digits(b.agencia as string, "beneficiario.agencia", 4);
  const tipo = b.tipoCobranca as string | undefined;
  if (tipo !== undefined && !/^(04DSC|08VDR|02VIN)$/.test(tipo))
    fail("CAMPO_INVALIDO", "tipo de cobrança must be 04DSC, 08VDR or 02VIN (absent for cobrança simples)", "beneficiario.tipoCobranca");
  return {
    agenciaDv: dvOrComputed(b.agenciaDv as string | undefined, b.agencia as string, "beneficiario.agenciaDv"),
    contaDv: dvOrComputed(b.contaDv as string | undefined, b.conta as string, "beneficiario.contaDv"),
  };
}

function dvOrComputed(dv: string | undefined, number: string, field: string): string {
  if (dv === undefined || dv === "") return CHECK_DIGITS.mod11BB(number);
  if (!/^[0-9X]$/.test(dv)) fail("CAMPO_INVALIDO", "DV must be one digit or X", field);
  return dv;
}

/** Santander identifies the account by its código de transmissão; 384–385 carry the conta's last digit and DV. */
function beneficiarioSantander400(b: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const codigo = b.codigoTransmissao as string | undefined;
  if (codigo === undefined || !/^\d{1,20}$/.test(codigo))
    fail("CAMPO_OBRIGATORIO", "Santander CNAB 400 needs the código de transmissão (up to 20 digits)", "beneficiario.codigoTransmissao");
  const dv = b.contaDv as string | undefined;
  if (dv === undefined || !/^\d$/.test(dv))
    fail("CAMPO_OBRIGATORIO", "Santander CNAB 400 needs the conta DV (one digit)", "beneficiario.contaDv");
  if (b.codigoCarteira !== undefined && !/^[1-7]$/.test(String(b.codigoCarteira)))
    fail("CAMPO_INVALIDO", "código da carteira must be one digit 1–7", "beneficiario.codigoCarteira");
  return { complementoConta: `${String(b.conta).slice(-1)}${dv}` };
}

const pad2 = (n: number) => String(n).padStart(2, "0");

function assertLocalDateTime(d: LocalDateTime, field: string): LocalDateTime {
  assertDate(d, field);
  for (const [k, max] of [
    ["hour", 23],
    ["minute", 59],
    ["second", 59],
  ] as const) {
    const v = d[k];
    if (!Number.isInteger(v) || v < 0 || v > max) fail("DATA_INVALIDA", `${k} out of range`, `${field}.${k}`);
  }
  return d;
}

function digits(v: string | undefined, field: string, max: number, required = true): string | undefined {
  if (v === undefined || v === null || v === "") {
    if (required) fail("CAMPO_OBRIGATORIO", `${field} is required`, field);
    return undefined;
  }
  if (typeof v !== "string" || !/^\d+$/.test(v)) fail("CAMPO_INVALIDO", `${field} must be digits`, field);
  if (v.replace(/^0+(?=\d)/, "").length > max) fail("CAMPO_EXCEDE_TAMANHO", `${field} has more than ${max} digits`, field, { max });
  return v;
}

function text(v: string | undefined, field: string, required: boolean): string | undefined {
  if (v === undefined || v === null || v.trim() === "") {
    if (required) fail("CAMPO_OBRIGATORIO", `${field} is required`, field);
    return undefined;
  }
  const t = cnabText(v, field);
  if (required && t === "") fail("CAMPO_INVALIDO", `${field} has no letters or digits`, field);
  return t;
}

function pessoa(p: Pessoa | undefined, field: string, strict: boolean, required: boolean) {
  if (!p) {
    if (required) fail("CAMPO_OBRIGATORIO", `${field} is required`, field);
    return undefined;
  }
  const doc = documento(p.documento, `${field}.documento`, strict);
  const uf = p.uf === undefined ? undefined : foldAscii(p.uf, `${field}.uf`).toUpperCase();
  if (uf !== undefined && !/^[A-Z]{2}$/.test(uf)) fail("CAMPO_INVALIDO", "UF must be two letters", `${field}.uf`);
  const cep = p.cep === undefined ? undefined : onlyDigits(p.cep);
  if (cep !== undefined && cep.length !== 8) fail("CAMPO_INVALIDO", "CEP must have 8 digits", `${field}.cep`);
  return {
    nome: text(p.nome, `${field}.nome`, true),
    documento: doc.numero,
    tipoInscricao: doc.tipo === "CPF" ? "1" : "2",
    tipoInscricao400: doc.tipo === "CPF" ? "01" : "02",
    endereco: text(p.endereco, `${field}.endereco`, false),
    bairro: text(p.bairro, `${field}.bairro`, false),
    cidade: text(p.cidade, `${field}.cidade`, false),
    cep,
    uf,
  };
}

/** A título checked and normalised for the layouts (its text folded, its charges with their defaults). */
export type TituloCtx = ReturnType<typeof tituloCtx>;

function tituloCtx(t: Titulo, i: number, strict: boolean, nossoNumeroDoBanco = false) {
  const f = `titulos[${i}]`;
  if (!t) fail("CAMPO_OBRIGATORIO", "título is required", f);
  if (typeof t.id !== "string" || t.id === "") fail("CAMPO_OBRIGATORIO", "id is required", `${f}.id`);
  if (!/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(t.id))
    fail("CAMPO_INVALIDO", "id must be printable ASCII without surrounding blanks", `${f}.id`);
  if (t.id.length > 25) fail("CAMPO_EXCEDE_TAMANHO", "id longer than 25 characters", `${f}.id`, { max: 25 });
  if (!nossoNumeroDoBanco) digits(t.nossoNumero, `${f}.nossoNumero`, 20);
  else if (t.nossoNumero !== undefined && t.nossoNumero !== "")
    fail(
      "CAMPO_INVALIDO",
      "the bank assigns the nosso número when it registers the título (the remessa leaves it zero, the retorno brings it): leave it out",
      `${f}.nossoNumero`,
    );
  const venc = assertDate(t.vencimento, `${f}.vencimento`);
  const emissao = assertDate(t.emissao, `${f}.emissao`);
  // a título becomes a boleto: the barcode's 10-digit value is the limit
  assertValorCentavos(t.valorCentavos, `${f}.valorCentavos`);
  const numeroDocumento = t.numeroDocumento === undefined ? undefined : cnabText(t.numeroDocumento, `${f}.numeroDocumento`);
  const ctx = {
    numeroDocumento,
    vencimento: venc,
    emissao,
    movimento: t.movimento ?? "01",
    juros: encargo(t.juros, "juros", f, venc),
    desconto: encargo(t.desconto, "desconto", f, venc),
    multa: encargo(t.multa, "multa", f, venc),
    protesto: t.protesto,
    baixa: t.baixa,
    nossoNumeroSequencial: t.nossoNumero,
    parcela: t.parcela ?? "01",
    mensagem1: t.mensagem1 === undefined ? undefined : cnabText(t.mensagem1, `${f}.mensagem1`),
    pagador: pessoa(t.pagador, `${f}.pagador`, strict, true),
    avalista: pessoa(t.avalista, `${f}.avalista`, strict, false),
    pix: pixCtx(t.pix, `${f}.pix`, t.valorCentavos, strict),
  };
  return comCamposDoTitulo(ctx, t);
}

/** DICT key types as the remessa PIX records number them. */
const TIPO_CHAVE_DICT: Readonly<Record<string, string>> = { CPF: "1", CNPJ: "2", TELEFONE: "3", EMAIL: "4", EVP: "5" };

function pixCtx(p: TituloPix | undefined, f: string, valorCentavos: number, strict: boolean) {
  if (!p) return undefined;
  const chave = p.chave;
  if (typeof chave !== "string" || chave === "") fail("CAMPO_OBRIGATORIO", "PIX needs the beneficiário's DICT key", `${f}.chave`);
  if (chave.length > 77) fail("CAMPO_EXCEDE_TAMANHO", `DICT key has ${chave.length} characters (max 77)`, `${f}.chave`, { max: 77 });
  const tipo = tipoChavePix(chave);
  if (!tipo)
    fail(
      "PIX_INVALIDO",
      `not a DICT key (CPF, CNPJ, +55 phone, e-mail or random key): ${JSON.stringify(chave.slice(0, 80))}`,
      `${f}.chave`,
    );
  if (tipo === "CPF" || tipo === "CNPJ") documento(chave, `${f}.chave`, strict);
  if (p.txid !== undefined && p.txid !== "" && !/^[A-Za-z0-9]{1,35}$/.test(p.txid))
    fail("PIX_INVALIDO", "txid must be 1–35 letters or digits", `${f}.txid`);
  return {
    chave,
    txid: p.txid || undefined,
    tipoChave: TIPO_CHAVE_DICT[tipo]!,
    // "as the beneficiário's profile says", one payment of the título's value (what BRC's fixture writes)
    tipoPagamento: "00",
    quantidadePagamentos: "01",
    tipoValor: "2",
    valorMaximo: valorCentavos,
    percentualMaximo: 10000,
    valorMinimo: valorCentavos,
    percentualMinimo: 10000,
  };
}

function encargo(e: Encargo | undefined, name: string, f: string, venc: CalendarDate) {
  if (!e) return undefined;
  if (!/^\d$/.test(e.codigo ?? "")) fail("CAMPO_INVALIDO", "código must be one digit", `${f}.${name}.codigo`);
  const needsDate = e.codigo !== "0" && e.codigo !== "3" && name !== "desconto";
  const data = e.data ? assertDate(e.data, `${f}.${name}.data`) : undefined;
  // dataInformada: layouts whose date field means "from this day" and is left zero when not given (Santander 400).
  return { codigo: e.codigo, data: data ?? (needsDate ? addDays(venc, 1) : undefined), dataInformada: data, valor: e.valor };
}

/**
 * The título's own fields under the derived ones: what `{ ...t, ...ctx }` holds, but built from the
 * derived object. Adding a dozen fields after a spread turns the object into a hash table, and the
 * layouts read every título's fields three times.
 */
function comCamposDoTitulo<C extends object>(ctx: C, t: Titulo): C & Omit<Titulo, keyof C> {
  const out = ctx as Record<string, unknown>;
  for (const k in t) if (Object.hasOwn(t, k) && !Object.hasOwn(ctx, k)) out[k] = (t as unknown as Record<string, unknown>)[k];
  return ctx as C & Omit<Titulo, keyof C>;
}

function beneficiarioCtx(b: Beneficiario, strict: boolean) {
  if (!b) fail("CAMPO_OBRIGATORIO", "beneficiário is required", "beneficiario");
  const doc = documento(b.documento, "beneficiario.documento", strict);
  digits(b.agencia, "beneficiario.agencia", 5);
  digits(b.conta, "beneficiario.conta", 12);
  if (b.convenio !== undefined && !/^\d+$/.test(b.convenio)) fail("CONVENIO_INVALIDO", "convênio must be digits", "beneficiario.convenio");
  return {
    ...b,
    nome: text(b.nome, "beneficiario.nome", true),
    documento: doc.numero,
    tipoInscricao: doc.tipo === "CPF" ? "1" : "2",
    tipoInscricao400: doc.tipo === "CPF" ? "01" : "02",
    convenioNumero: b.convenio,
  };
}

const ASCII = new TextEncoder();

function finish(lines: string[], warnings: Warning[], fimDeArquivo = ""): RemessaOutput {
  const text = lines.join("\r\n") + "\r\n" + fimDeArquivo;
  const check = assertCnab(text); // the structural checker runs before anything is returned
  // The checker lets printable ASCII only through, where UTF-8 is one byte per character, as latin1 is.
  const bytes = ASCII.encode(text);
  return { bytes, text, records: lines.length, warnings, check };
}

/** An error raised while writing título i, reported under `titulos[i]` (callers know títulos by index). */
function sobTitulo(e: unknown, i: number): unknown {
  const prefix = `titulos[${i}]`;
  if (e instanceof CobrancaError && e.field && !e.field.startsWith(prefix)) {
    const rel = e.field.replace(/^titulo\./, "");
    return new CobrancaError(
      e.code,
      e.message.replace(/^[A-Z_]+(?: \([^)]*\))?: /, ""),
      `${prefix}.${rel}`,
      e.details ? { ...e.details } : undefined,
    );
  }
  return e;
}

/** Build a remessa file. Deterministic: same input → same bytes. */
export function gerarRemessa(input: RemessaInput): RemessaOutput {
  if (!input) fail("CAMPO_OBRIGATORIO", "input is required", "input");
  const bank = getBank(input.banco, "banco");
  if (!Number.isSafeInteger(input.nsa) || input.nsa < 0) fail("CAMPO_INVALIDO", "NSA must be a non-negative integer", "nsa");
  const geradoEm = assertLocalDateTime(input.geradoEm, "geradoEm");
  if (!Array.isArray(input.titulos) || input.titulos.length === 0) fail("LOTE_VAZIO", "a remessa needs at least one título", "titulos");
  const strict = input.validarDocumentos !== false;
  // the writer first: a bank without one is refused as such, whatever its títulos hold
  const p400 = input.layout === 400 && bank.code !== "070" ? CNAB400_PROFILES[bank.code] : undefined;
  if (input.layout === 400 && bank.code !== "070" && !p400)
    fail(
      "CNAB_LAYOUT_DESCONHECIDO",
      `no CNAB 400 remessa layout for bank ${bank.code} (have: ${Object.keys(CNAB400_PROFILES).join(", ")})`,
      "banco",
    );
  if (input.layout !== 240 && input.layout !== 400)
    fail("CNAB_LAYOUT_DESCONHECIDO", `layout must be 240 or 400, got ${String(input.layout)}`, "layout");
  const p240 = input.layout === 240 ? profile240(bank.code) : undefined;
  const beneficiario = beneficiarioCtx(input.beneficiario, strict);
  const nossoNumeroDoBanco = bancoAtribuiNossoNumero(bank.code);
  const titulos = input.titulos.map((t, i) => tituloCtx(t, i, strict, nossoNumeroDoBanco));
  const arquivo = {
    data: { year: geradoEm.year, month: geradoEm.month, day: geradoEm.day },
    hora: `${pad2(geradoEm.hour)}${pad2(geradoEm.minute)}${pad2(geradoEm.second)}`,
    nsa: input.nsa,
    // Safra numbers files with 3 digits in every record; the sequence wraps
    nsa3: input.nsa % 1000,
    direcao: "1",
  };
  const warnings: Warning[] = [];
  if (p240) return remessa240(bank.code, p240, arquivo, beneficiario, titulos, warnings);
  // BRB's remessa is its own "DCB" file, not CNAB 400 (decision 0027)
  if (!p400) return remessaBrb(arquivo, beneficiario, titulos, warnings);
  return remessa400(p400, arquivo, beneficiario, titulos, warnings);
}

type Ctx = Record<string, unknown>;

function remessa240(
  banco: string,
  profile: Cnab240Profile,
  arquivo: Ctx,
  beneficiario: Ctx,
  titulos: ReturnType<typeof tituloCtx>[],
  warnings: Warning[],
): RemessaOutput {
  for (const e of profile.beneficiarioExige ?? []) {
    const v = beneficiario[e.campo];
    if (typeof v !== "string" || !e.formato.test(v))
      fail("CAMPO_OBRIGATORIO", `${getBank(banco).cnabName.trim()} CNAB 240 needs ${e.descricao}`, `beneficiario.${e.campo}`);
  }
  const perTitulo = profile.segmentos.length;
  const registrosLote = titulos.length * perTitulo + 2;
  if (titulos.length * perTitulo > 99_999)
    fail("LIMITE_DE_REGISTROS", "more than 99,999 details in one lote", "titulos", { max: Math.floor(99_999 / perTitulo) });
  const base: Ctx = {
    banco,
    bancoNome: getBank(banco).cnabName,
    arquivo: { ...arquivo, versao: profile.versaoArquivo, densidade: profile.densidade },
    lote: { numero: 1, operacao: "R", versao: profile.versaoLote },
    beneficiario,
  };
  const lines: string[] = [];
  lines.push(encodeRecord(layout240(profile, "headerArquivo"), base, warnings, "headerArquivo"));
  lines.push(encodeRecord(layout240(profile, "headerLote"), base, warnings, "headerLote"));
  const segmentos = profile.segmentos.map((s) => layout240(profile, s));
  // one context per file, pointed at each título and segment in turn: no copies per record
  const ctx: Ctx = { ...base, seq: 0, titulo: undefined, pagador: undefined, avalista: undefined };
  const dvCtx: Ctx = { ...base, titulo: undefined };
  let seq = 0;
  for (let i = 0; i < titulos.length; i++) {
    const t = titulos[i]!;
    try {
      if (profile.nossoNumeroDv) {
        dvCtx.titulo = t;
        const src = profile.nossoNumeroDv.tpl.map(([path, n]) => String(getPath(dvCtx, path) ?? "").padStart(n, "0")).join("");
        (t as Ctx).nossoNumeroDv = CHECK_DIGITS[profile.nossoNumeroDv.algo](src);
      }
      if (profile.nossoNumeroDvDoBoleto) {
        const b = beneficiario as { agencia?: string; conta?: string; carteira?: string };
        const nn = nossoNumero({
          banco,
          agencia: b.agencia ?? "",
          conta: b.conta ?? "",
          carteira: b.carteira ?? "",
          nossoNumero: t.nossoNumero ?? "",
        });
        (t as Ctx).nossoNumeroDv = nn.completo.slice(-1);
      }
      if (t.pix) semPix(`${getBank(banco).cnabName.trim()} CNAB 240`);
      if (profile.semSlot) conferirSlots240(`${getBank(banco).cnabName.trim()} CNAB 240`, profile.semSlot, t);
      ctx.titulo = t;
      ctx.pagador = t.pagador;
      ctx.avalista = t.avalista;
      for (const layout of segmentos) {
        ctx.seq = ++seq;
        lines.push(encodeRecord(layout, ctx, warnings, ""));
      }
    } catch (e) {
      throw sobTitulo(e, i);
    }
  }
  const totais = {
    registrosLote,
    titulos: titulos.length,
    valorCentavos: titulos.reduce((s, t) => s + t.valorCentavos, 0),
    lotes: 1,
    registrosArquivo: registrosLote + 2,
  };
  lines.push(encodeRecord(layout240(profile, "trailerLote"), { ...base, totais }, warnings, "trailerLote"));
  lines.push(encodeRecord(layout240(profile, "trailerArquivo"), { ...base, totais }, warnings, "trailerArquivo"));
  if (lines.length > 999_999) fail("LIMITE_DE_REGISTROS", "more than 999,999 records in one file", "titulos");
  return finish(lines, warnings);
}

/** BRB's DCB file (remessa-brb.ts): the header counts the records, so it is written last, then put first. */
function remessaBrb(arquivo: Ctx, beneficiario: Ctx, titulos: TituloCtx[], warnings: Warning[]): RemessaOutput {
  const brb = escritorBrb(beneficiario, warnings);
  const lines = [""];
  titulos.forEach((t, i) => {
    try {
      lines.push(...brb.registros(t));
    } catch (e) {
      throw sobTitulo(e, i);
    }
  });
  if (lines.length > 999_999) fail("LIMITE_DE_REGISTROS", "more than 999,999 records in one file", "titulos");
  lines[0] = brb.header(arquivo, lines.length);
  return finish(lines, warnings);
}

/** Refuses what a bank's segment P has no slot for (Cnab240Profile.semSlot), naming the field. */
function conferirSlots240(arquivo: string, s: NonNullable<Cnab240Profile["semSlot"]>, t: ReturnType<typeof tituloCtx>): void {
  const recusa = (campo: string, porque: string) => fail("CAMPO_INVALIDO", `${arquivo} ${porque}`, `titulo.${campo}`);
  if (s.jurosCodigo && t.juros && !["0", "1", "3"].includes(t.juros.codigo))
    recusa("juros.codigo", `holds juros only as a value per day (code 1) or none (0, 3), got code ${t.juros.codigo}`);
  if (s.descontoCodigo && t.desconto && !["0", "1"].includes(t.desconto.codigo))
    recusa("desconto.codigo", `holds a desconto only as a value up to a date (code 1), got code ${t.desconto.codigo}`);
  const dias = t.baixa?.dias;
  if (dias !== undefined && Number(dias) > s.baixaDiasMax) recusa("baixa.dias", `takes at most ${s.baixaDiasMax} days for a baixa`);
}

/** Refuses what the bank's CNAB 400 detail has no slot for, naming the bank and what would be lost. */
function conferirEncargos400(p: Cnab400Profile, t: ReturnType<typeof tituloCtx>): void {
  const banco = `${p.bancoNome.trim()} CNAB 400`;
  const recusa = (campo: string, porque: string) => fail("CAMPO_INVALIDO", `${banco} ${porque} (CNAB 240 carries it)`, `titulo.${campo}`);
  const a = p.aceita;
  if (t.juros) {
    const isento = t.juros.codigo === "3" || t.juros.codigo === "0";
    if (!isento && t.juros.codigo !== "1")
      recusa("juros.codigo", `holds juros only as a value per day (code 1) or none (0, 3), got code ${t.juros.codigo}`);
    if (isento && t.juros.valor) recusa("juros.valor", `writes no juros for code ${t.juros.codigo}: leave the value out`);
    if (t.juros.dataInformada && !a.jurosData) recusa("juros.data", "has no juros start date: the bank starts the day after the due date");
  }
  if (t.multa) {
    if (!a.multaCodigos) recusa("multa", "has no multa in this writer's records");
    else if (!a.multaCodigos.includes(t.multa.codigo))
      recusa("multa.codigo", `takes multa codes ${a.multaCodigos.join(", ")}, got ${t.multa.codigo}`);
    if (t.multa.dataInformada && !a.multaData) recusa("multa.data", "has no multa date");
  }
  if (t.desconto && t.desconto.codigo !== "1")
    recusa("desconto.codigo", `holds a desconto only as a value up to a date (code 1), got code ${t.desconto.codigo}`);
  if (t.protesto && !a.protesto) recusa("protesto", "has no protest instruction in this writer's records");
  if (t.baixa) recusa("baixa", "has no baixa instruction in this writer's records");
  if (t.avalista && !a.avalista) recusa("avalista", "is written without a sacador/avalista");
  if (t.pix && !a.pix) semPix(banco);
}

/** A PIX the file cannot carry would leave the bank registering a boleto without it: refused, never dropped. */
function semPix(arquivo: string): never {
  fail(
    "CAMPO_INVALIDO",
    `${arquivo} remessa has no PIX record in this writer (only Santander CNAB 400's type 8 is written; the others are not verified against the banks' manuals): send the título without PIX or in a layout that carries it`,
    "titulo.pix",
  );
}

function remessa400(
  p: Cnab400Profile,
  arquivo: Ctx,
  beneficiarioIn: Ctx,
  titulos: ReturnType<typeof tituloCtx>[],
  warnings: Warning[],
): RemessaOutput {
  const beneficiario = p.beneficiario ? { ...beneficiarioIn, ...p.beneficiario(beneficiarioIn) } : beneficiarioIn;
  const base: Ctx = { banco: p.banco, bancoNome: p.bancoNome, arquivo, beneficiario };
  const lines: string[] = [];
  lines.push(encodeRecord(p.header, { ...base, seq: 1 }, warnings, "header"));
  titulos.forEach((t, i) => {
    try {
      conferirEncargos400(p, t);
      const ctx: Ctx = { ...base, titulo: { ...t }, pagador: t.pagador, avalista: t.avalista };
      const tt = ctx.titulo as Record<string, unknown>;
      if (p.codigos) tt.codigos400 = p.codigos(t);
      if (t.nossoNumero !== undefined && String(t.nossoNumero).replace(/^0+(?=\d)/, "").length > p.nossoNumeroLen)
        fail("CAMPO_EXCEDE_TAMANHO", `nosso número has more than ${p.nossoNumeroLen} digits`, "nossoNumero", { max: p.nossoNumeroLen });
      if (p.nossoNumeroDv) {
        const src = p.nossoNumeroDv.tpl.map(([path, n]) => String(getPath(ctx, path) ?? "").padStart(n, "0")).join("");
        tt.nossoNumeroDv = CHECK_DIGITS[p.nossoNumeroDv.algo](src);
      }
      lines.push(encodeRecord(p.detalhe, { ...ctx, seq: lines.length + 1 }, warnings, ""));
      for (const x of p.extras)
        if (getPath(ctx, x.when) !== undefined) lines.push(encodeRecord(x.layout, { ...ctx, seq: lines.length + 1 }, warnings, ""));
    } catch (e) {
      throw sobTitulo(e, i);
    }
  });
  const totais = {
    registros: lines.length + 1,
    titulos: titulos.length,
    valorCentavos: titulos.reduce((s, t) => s + t.valorCentavos, 0),
  };
  lines.push(encodeRecord(p.trailer, { ...base, totais, seq: lines.length + 1 }, warnings, "trailer"));
  if (lines.length > 999_999) fail("LIMITE_DE_REGISTROS", "more than 999,999 records in one file", "titulos");
  return finish(lines, warnings, p.fimDeArquivo);
}

// ------------------------------------------------------------------ reader

export interface TituloLido {
  readonly id?: string;
  readonly nossoNumero?: string;
  readonly numeroDocumento?: string;
  readonly vencimento?: CalendarDate;
  readonly emissao?: CalendarDate;
  readonly valorCentavos?: number;
  readonly movimento?: string;
  readonly especie?: string;
  readonly pagador?: Record<string, unknown>;
  readonly multa?: Record<string, unknown>;
  readonly juros?: Record<string, unknown>;
  readonly [k: string]: unknown;
}

export interface RemessaLida {
  readonly banco: string;
  readonly layout: 240 | 400;
  readonly nsa?: number;
  readonly data?: CalendarDate;
  readonly beneficiario: Record<string, unknown>;
  readonly titulos: TituloLido[];
  readonly warnings: Warning[];
  /** Every record with its raw fields, in file order (re-encodes to the same bytes). */
  readonly records: { layout: RecordLayout; raw: Record<string, string> }[];
  /** What followed the last line end (BNB's end-of-file byte), "" when nothing. */
  readonly fimDeArquivo: string;
}

/** Read a remessa file back with the same tables that write it. */
export function lerRemessa(content: string | Uint8Array): RemessaLida {
  const check = assertCnab(content);
  const banco = check.banco!;
  const warnings: Warning[] = [];
  const records: { layout: RecordLayout; raw: Record<string, string> }[] = [];
  const titulos: Record<string, unknown>[] = [];
  let beneficiario: Record<string, unknown> = {};
  let nsa: number | undefined;
  let data: CalendarDate | undefined;
  const { lines, fimDeArquivo } = splitLines(content);
  if (check.direction !== "remessa") fail("CNAB_ESTRUTURA_INVALIDA", "not a remessa file", "arquivo");
  if (banco === "070" && isDcb(lines[0]!)) {
    const brb = lerRemessaBrb(lines, warnings);
    return {
      banco,
      layout: 400,
      ...(brb.data ? { data: brb.data } : {}),
      beneficiario: brb.beneficiario,
      titulos: brb.titulos as TituloLido[],
      warnings,
      records: brb.records,
      fimDeArquivo: "",
    };
  }
  if (check.layout === 240) {
    const profile = profile240(banco);
    lines.forEach((l, i) => {
      const kind =
        l[7] === "0"
          ? "headerArquivo"
          : l[7] === "1"
            ? "headerLote"
            : l[7] === "5"
              ? "trailerLote"
              : l[7] === "9"
                ? "trailerArquivo"
                : (l[13] as "P" | "Q" | "R");
      if (!["headerArquivo", "headerLote", "trailerLote", "trailerArquivo", "P", "Q", "R"].includes(kind)) {
        warnings.push({ code: "SEGMENTO_IGNORADO", field: `linha ${i + 1}`, message: `segment ${kind} not read` });
        return;
      }
      const layout = layout240(profile, kind);
      const d = decodeRecord(layout, l, warnings, i + 1);
      records.push({ layout, raw: d.raw });
      if (kind === "headerArquivo") {
        beneficiario = (d.data.beneficiario as Record<string, unknown>) ?? {};
        const a = d.data.arquivo as Record<string, unknown> | undefined;
        nsa = a?.nsa !== undefined ? Number(a.nsa) : undefined;
        data = a?.data as CalendarDate | undefined;
      }
      if (kind === "P") titulos.push({ ...(d.data.titulo as object) });
      if ((kind === "Q" || kind === "R") && titulos.length) {
        const t = titulos[titulos.length - 1]!;
        Object.assign(t, mergeDeep(t, (d.data.titulo as object) ?? {}));
        if (kind === "Q") {
          t.pagador = d.data.pagador;
          if (d.data.avalista) t.avalista = d.data.avalista;
        }
      }
    });
  } else {
    const p = CNAB400_PROFILES[banco];
    if (!p) fail("CNAB_LAYOUT_DESCONHECIDO", `no CNAB 400 remessa layout for bank ${banco}`, "banco");
    lines.forEach((l, i) => {
      const layout =
        i === 0
          ? p.header
          : l[0] === "9"
            ? p.trailer
            : l[0] === p.detalheTipo
              ? p.detalhe
              : p.extras.find((x) => x.layout.fields[0]!.value === l[0])?.layout;
      if (!layout) {
        warnings.push({ code: "REGISTRO_IGNORADO", field: `linha ${i + 1}`, message: `record type ${l[0]} not read` });
        return;
      }
      const d = decodeRecord(layout, l, warnings, i + 1);
      records.push({ layout, raw: d.raw });
      if (i === 0) {
        beneficiario = (d.data.beneficiario as Record<string, unknown>) ?? {};
        const a = d.data.arquivo as Record<string, unknown> | undefined;
        nsa = a?.nsa !== undefined ? Number(a.nsa) : undefined;
        data = a?.data as CalendarDate | undefined;
      } else if (layout === p.detalhe) {
        titulos.push({ ...(d.data.titulo as object), pagador: d.data.pagador, ...(d.data.avalista ? { avalista: d.data.avalista } : {}) });
      } else if (layout !== p.trailer && titulos.length) {
        const t = titulos[titulos.length - 1]!;
        Object.assign(t, mergeDeep(t, (d.data.titulo as object) ?? {}));
      }
    });
  }
  return {
    banco,
    layout: check.layout!,
    ...(nsa !== undefined ? { nsa } : {}),
    ...(data ? { data } : {}),
    beneficiario,
    titulos: titulos.map((t) => {
      const { nossoNumeroSequencial, nossoNumeroCampo, ...rest } = t as Record<string, unknown>;
      return { ...rest, nossoNumero: (nossoNumeroSequencial ?? nossoNumeroCampo) as string | undefined } as TituloLido;
    }),
    warnings,
    records,
    fimDeArquivo: fimDeArquivo ? "\x1a" : "",
  };
}

function mergeDeep(a: Record<string, unknown>, b: object): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object" && !("year" in (v as object)))
      out[k] = mergeDeep(out[k] as Record<string, unknown>, v as object);
    else out[k] = v;
  }
  return out;
}

/** Re-encode records read by lerRemessa from their raw fields (identity: proves the layouts tile). */
export function reescreverRemessa(lida: RemessaLida, eol = "\r\n"): string {
  return lida.records.map((r) => r.layout.fields.map((f) => r.raw[f.name]).join("") + eol).join("") + lida.fimDeArquivo;
}
