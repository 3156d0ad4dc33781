/**
 * CNAB 240 (FEBRABAN, cobrança) as data: the generic records and, per bank, a profile with versions
 * and field overrides (cobranca.md §4.2). Context paths are documented in remessa.ts.
 */
import { fail } from "../errors.js";
import { A, B, K, N, type FieldDef, type RecordLayout, Z, defineRecord, overrideRecord } from "./record.js";

const common = (_tipo: string): FieldDef[] => [N("banco", 1, 3, { src: "banco" })];

export const HEADER_ARQUIVO_240 = defineRecord("headerArquivo", 240, [
  ...common("0"),
  K("lote", 4, 7, "0000", "N"),
  K("tipoRegistro", 8, 8, "0", "N"),
  B(9, 17),
  N("tipoInscricao", 18, 18, { src: "beneficiario.tipoInscricao" }),
  N("documento", 19, 32, { src: "beneficiario.documento", fmt: "taxid" }),
  A("convenio", 33, 52, { src: "beneficiario.convenio", fmt: "raw" }),
  N("agencia", 53, 57, { src: "beneficiario.agencia" }),
  A("agenciaDv", 58, 58, { src: "beneficiario.agenciaDv", fmt: "raw" }),
  N("conta", 59, 70, { src: "beneficiario.conta" }),
  A("contaDv", 71, 71, { src: "beneficiario.contaDv", fmt: "raw" }),
  A("agenciaContaDv", 72, 72, { src: "beneficiario.agenciaContaDv", fmt: "raw" }),
  A("nomeEmpresa", 73, 102, { src: "beneficiario.nome", truncate: true }),
  A("nomeBanco", 103, 132, { src: "bancoNome", truncate: true }),
  B(133, 142),
  N("codigoRemessaRetorno", 143, 143, { src: "arquivo.direcao" }),
  N("dataGeracao", 144, 151, { src: "arquivo.data", fmt: "date8" }),
  N("horaGeracao", 152, 157, { src: "arquivo.hora" }),
  N("nsa", 158, 163, { src: "arquivo.nsa" }),
  N("versaoLayout", 164, 166, { src: "arquivo.versao" }),
  N("densidade", 167, 171, { src: "arquivo.densidade" }),
  A("reservadoBanco", 172, 191, { src: "arquivo.reservadoBanco", fmt: "raw" }),
  A("reservadoEmpresa", 192, 211, { src: "arquivo.reservadoEmpresa", fmt: "raw" }),
  B(212, 240),
]);

export const HEADER_LOTE_240 = defineRecord("headerLote", 240, [
  ...common("1"),
  N("lote", 4, 7, { src: "lote.numero" }),
  K("tipoRegistro", 8, 8, "1", "N"),
  A("operacao", 9, 9, { src: "lote.operacao", fmt: "raw" }),
  K("servico", 10, 11, "01", "N"),
  B(12, 13),
  N("versaoLote", 14, 16, { src: "lote.versao" }),
  B(17, 17),
  N("tipoInscricao", 18, 18, { src: "beneficiario.tipoInscricao" }),
  N("documento", 19, 33, { src: "beneficiario.documento", fmt: "taxid" }),
  A("convenio", 34, 53, { src: "beneficiario.convenio", fmt: "raw" }),
  N("agencia", 54, 58, { src: "beneficiario.agencia" }),
  A("agenciaDv", 59, 59, { src: "beneficiario.agenciaDv", fmt: "raw" }),
  N("conta", 60, 71, { src: "beneficiario.conta" }),
  A("contaDv", 72, 72, { src: "beneficiario.contaDv", fmt: "raw" }),
  A("agenciaContaDv", 73, 73, { src: "beneficiario.agenciaContaDv", fmt: "raw" }),
  A("nomeEmpresa", 74, 103, { src: "beneficiario.nome", truncate: true }),
  A("mensagem1", 104, 143, { src: "lote.mensagem1", truncate: true }),
  A("mensagem2", 144, 183, { src: "lote.mensagem2", truncate: true }),
  N("numeroRemessa", 184, 191, { src: "arquivo.nsa" }),
  N("dataGravacao", 192, 199, { src: "arquivo.data", fmt: "date8" }),
  N("dataCredito", 200, 207, { src: "lote.dataCredito", fmt: "date8" }),
  B(208, 240),
]);

const detalhe = (seg: string): FieldDef[] => [
  ...common("3"),
  N("lote", 4, 7, { src: "lote.numero" }),
  K("tipoRegistro", 8, 8, "3", "N"),
  N("sequencial", 9, 13, { src: "seq" }),
  K("segmento", 14, 14, seg),
  B(15, 15),
  N("movimento", 16, 17, { src: "titulo.movimento" }),
];

export const SEGMENTO_P = defineRecord("segmentoP", 240, [
  ...detalhe("P"),
  N("agencia", 18, 22, { src: "beneficiario.agencia" }),
  A("agenciaDv", 23, 23, { src: "beneficiario.agenciaDv", fmt: "raw" }),
  N("conta", 24, 35, { src: "beneficiario.conta" }),
  A("contaDv", 36, 36, { src: "beneficiario.contaDv", fmt: "raw" }),
  A("agenciaContaDv", 37, 37, { src: "beneficiario.agenciaContaDv", fmt: "raw" }),
  A("nossoNumero", 38, 57, { src: "titulo.nossoNumero", fmt: "raw" }),
  N("carteira", 58, 58, { src: "beneficiario.codigoCarteira", default: "1" }),
  N("formaCadastramento", 59, 59, { src: "titulo.formaCadastramento", default: "1" }),
  A("tipoDocumento", 60, 60, { src: "titulo.tipoDocumento", fmt: "raw", default: "1" }),
  N("emissaoBoleto", 61, 61, { src: "titulo.emissaoBoleto", default: "2" }),
  N("distribuicaoBoleto", 62, 62, { src: "titulo.distribuicaoBoleto", default: "2" }),
  A("numeroDocumento", 63, 77, { src: "titulo.numeroDocumento" }),
  N("vencimento", 78, 85, { src: "titulo.vencimento", fmt: "date8" }),
  N("valor", 86, 100, { src: "titulo.valorCentavos", fmt: "cents" }),
  N("agenciaCobradora", 101, 105, { src: "titulo.agenciaCobradora" }),
  A("agenciaCobradoraDv", 106, 106, { src: "titulo.agenciaCobradoraDv", fmt: "raw" }),
  N("especie", 107, 108, { src: "titulo.especie", default: "02" }),
  A("aceite", 109, 109, { src: "titulo.aceite", fmt: "raw", default: "N" }),
  N("emissao", 110, 117, { src: "titulo.emissao", fmt: "date8" }),
  N("jurosCodigo", 118, 118, { src: "titulo.juros.codigo", default: "3" }),
  N("jurosData", 119, 126, { src: "titulo.juros.data", fmt: "date8" }),
  N("jurosValor", 127, 141, { src: "titulo.juros.valor", fmt: "cents" }),
  N("descontoCodigo", 142, 142, { src: "titulo.desconto.codigo", default: "0" }),
  N("descontoData", 143, 150, { src: "titulo.desconto.data", fmt: "date8" }),
  N("descontoValor", 151, 165, { src: "titulo.desconto.valor", fmt: "cents" }),
  N("iof", 166, 180, { src: "titulo.iofCentavos", fmt: "cents" }),
  N("abatimento", 181, 195, { src: "titulo.abatimentoCentavos", fmt: "cents" }),
  A("identificacaoTitulo", 196, 220, { src: "titulo.id", fmt: "raw" }),
  N("protestoCodigo", 221, 221, { src: "titulo.protesto.codigo", default: "3" }),
  N("protestoDias", 222, 223, { src: "titulo.protesto.dias" }),
  N("baixaCodigo", 224, 224, { src: "titulo.baixa.codigo", default: "0" }),
  N("baixaDias", 225, 227, { src: "titulo.baixa.dias" }),
  K("moeda", 228, 229, "09", "N"),
  N("contrato", 230, 239, { src: "titulo.contrato" }),
  B(240, 240),
]);

export const SEGMENTO_Q = defineRecord("segmentoQ", 240, [
  ...detalhe("Q"),
  N("tipoInscricao", 18, 18, { src: "pagador.tipoInscricao" }),
  N("documento", 19, 33, { src: "pagador.documento", fmt: "taxid" }),
  A("nome", 34, 73, { src: "pagador.nome", truncate: true }),
  A("endereco", 74, 113, { src: "pagador.endereco", truncate: true }),
  A("bairro", 114, 128, { src: "pagador.bairro", truncate: true }),
  N("cep", 129, 136, { src: "pagador.cep" }),
  A("cidade", 137, 151, { src: "pagador.cidade", truncate: true }),
  A("uf", 152, 153, { src: "pagador.uf" }),
  N("avalistaTipoInscricao", 154, 154, { src: "avalista.tipoInscricao" }),
  N("avalistaDocumento", 155, 169, { src: "avalista.documento", fmt: "taxid" }),
  A("avalistaNome", 170, 209, { src: "avalista.nome", truncate: true }),
  N("bancoCorrespondente", 210, 212, { src: "titulo.bancoCorrespondente" }),
  A("nossoNumeroCorrespondente", 213, 232, { src: "titulo.nossoNumeroCorrespondente", fmt: "raw" }),
  B(233, 240),
]);

export const SEGMENTO_R = defineRecord("segmentoR", 240, [
  ...detalhe("R"),
  N("desconto2Codigo", 18, 18, { src: "titulo.desconto2.codigo", default: "0" }),
  N("desconto2Data", 19, 26, { src: "titulo.desconto2.data", fmt: "date8" }),
  N("desconto2Valor", 27, 41, { src: "titulo.desconto2.valor", fmt: "cents" }),
  N("desconto3Codigo", 42, 42, { src: "titulo.desconto3.codigo", default: "0" }),
  N("desconto3Data", 43, 50, { src: "titulo.desconto3.data", fmt: "date8" }),
  N("desconto3Valor", 51, 65, { src: "titulo.desconto3.valor", fmt: "cents" }),
  N("multaCodigo", 66, 66, { src: "titulo.multa.codigo", default: "0" }),
  N("multaData", 67, 74, { src: "titulo.multa.data", fmt: "date8" }),
  N("multaValor", 75, 89, { src: "titulo.multa.valor", fmt: "cents" }),
  A("informacaoPagador", 90, 99, { src: "titulo.informacaoPagador", truncate: true }),
  A("mensagem3", 100, 139, { src: "titulo.mensagem3", truncate: true }),
  A("mensagem4", 140, 179, { src: "titulo.mensagem4", truncate: true }),
  B(180, 199),
  N("ocorrenciaPagador", 200, 207),
  N("debitoBanco", 208, 210),
  N("debitoAgencia", 211, 215),
  A("debitoAgenciaDv", 216, 216),
  N("debitoConta", 217, 228),
  A("debitoContaDv", 229, 229),
  A("debitoAgContaDv", 230, 230),
  N("avisoDebito", 231, 231),
  B(232, 240),
]);

export const TRAILER_LOTE_240 = defineRecord("trailerLote", 240, [
  ...common("5"),
  N("lote", 4, 7, { src: "lote.numero" }),
  K("tipoRegistro", 8, 8, "5", "N"),
  B(9, 17),
  N("quantidadeRegistros", 18, 23, { src: "totais.registrosLote" }),
  N("quantidadeSimples", 24, 29, { src: "totais.titulos" }),
  N("valorSimples", 30, 46, { src: "totais.valorCentavos", fmt: "cents" }),
  Z(47, 52),
  Z(53, 69),
  Z(70, 75),
  Z(76, 92),
  Z(93, 98),
  Z(99, 115),
  B(116, 123),
  B(124, 240),
]);

export const TRAILER_ARQUIVO_240 = defineRecord("trailerArquivo", 240, [
  ...common("9"),
  K("lote", 4, 7, "9999", "N"),
  K("tipoRegistro", 8, 8, "9", "N"),
  B(9, 17),
  N("quantidadeLotes", 18, 23, { src: "totais.lotes" }),
  N("quantidadeRegistros", 24, 29, { src: "totais.registrosArquivo" }),
  Z(30, 35),
  B(36, 240),
]);

export type Cnab240Record = "headerArquivo" | "headerLote" | "P" | "Q" | "R" | "trailerLote" | "trailerArquivo";

export interface Cnab240Profile {
  readonly banco: string;
  readonly versaoArquivo: string;
  readonly versaoLote: string;
  readonly densidade: string;
  /** Template of P 38–57 (nosso número block), placeholders as in record.ts. */
  readonly nossoNumeroTpl: string;
  /** Segments written per título. */
  readonly segmentos: readonly ("P" | "Q" | "R")[];
  /** The NN check digit is the boleto's (banks.ts), for banks whose rule depends on the carteira (Itaú). */
  readonly nossoNumeroDvDoBoleto?: true;
  /** NN check digit made available to the template as {titulo.nossoNumeroDv}. */
  readonly nossoNumeroDv?: { readonly algo: import("../checkdigits.js").CheckDigitAlgorithm; readonly tpl: readonly [string, number][] };
  readonly overrides: Partial<Record<Cnab240Record, readonly FieldDef[]>>;
  /**
   * What this bank's segment P has no slot for, refused instead of written wrong: no juros code (only a value
   * per day), no desconto code (only a value up to a date), baixa days in fewer than three digits.
   */
  readonly semSlot?: { readonly jurosCodigo: true; readonly descontoCodigo: true; readonly baixaDiasMax: number };
  /** Beneficiário fields this bank's records cannot go without (written raw, they would be blank). */
  readonly beneficiarioExige?: readonly {
    readonly campo: "codigoTransmissao" | "contaDv";
    readonly formato: RegExp;
    readonly descricao: string;
  }[];
}

const BASE: Record<Cnab240Record, RecordLayout> = {
  headerArquivo: HEADER_ARQUIVO_240,
  headerLote: HEADER_LOTE_240,
  P: SEGMENTO_P,
  Q: SEGMENTO_Q,
  R: SEGMENTO_R,
  trailerLote: TRAILER_LOTE_240,
  trailerArquivo: TRAILER_ARQUIVO_240,
};

/** Right-aligned identification of the título, as BB/Sicoob/Sicredi write it (brcobranca golden files). */
const ID_RIGHT = A("identificacaoTitulo", 196, 220, { src: "titulo.id", fmt: "raw", align: "right" });
// FEBRABAN 240 G064 "número do documento de cobrança" is X(15): the client's reference (NF-0001) is
// alphanumeric. These banks' files write an all-digit one right-aligned and zero-filled, as a number.
const DOC_NUM = A("numeroDocumento", 63, 77, { src: "titulo.numeroDocumento", fmt: "docnum" });

const CAIXA: Cnab240Profile = {
  banco: "104",
  versaoArquivo: "050",
  versaoLote: "030",
  densidade: "00000",
  nossoNumeroTpl: "",
  segmentos: ["P", "Q", "R"],
  overrides: {
    headerArquivo: [
      Z(33, 52),
      N("convenio", 59, 64, { src: "beneficiario.convenio" }),
      Z(65, 72),
      A("reservadoEmpresa", 192, 211, { src: "arquivo.reservadoEmpresa", fmt: "raw", default: "REMESSA-PRODUCAO" }),
      A("versaoAplicativo", 212, 215, { src: "beneficiario.versaoAplicativo", fmt: "raw" }),
      B(216, 240),
    ],
    headerLote: [
      Z(12, 13),
      N("convenio", 34, 39, { src: "beneficiario.convenio" }),
      Z(40, 53),
      N("convenio2", 60, 65, { src: "beneficiario.convenio" }),
      Z(66, 73),
    ],
    P: [
      N("convenio", 24, 29, { src: "beneficiario.convenio" }),
      Z(30, 40),
      // modalidade 1 (registrada: every boleto is registered, cobranca.md §1.5) + emissão 4 (beneficiário) + NN(15)
      A("nossoNumero", 41, 57, { src: "titulo.nossoNumeroCampo", fmt: "template", tpl: "14{titulo.nossoNumeroSequencial:15}" }),
      A("tipoDocumento", 60, 60, { src: "titulo.tipoDocumento", fmt: "raw", default: "2" }),
      N("distribuicaoBoleto", 62, 62, { src: "titulo.distribuicaoBoleto", default: "0" }),
      A("numeroDocumento", 63, 73, { src: "titulo.numeroDocumento", fmt: "docnum" }),
      B(74, 77),
      N("agenciaCobradoraDv", 106, 106),
    ],
    R: [B(200, 240)],
    trailerLote: [Z(24, 29), Z(30, 46), B(93, 98), B(99, 115)],
    trailerArquivo: [B(30, 35)],
  },
};

const SANTANDER: Cnab240Profile = {
  banco: "033",
  versaoArquivo: "040",
  versaoLote: "030",
  densidade: "",
  nossoNumeroTpl: "",
  segmentos: ["P", "Q", "R"],
  nossoNumeroDv: { algo: "mod11S", tpl: [["titulo.nossoNumeroSequencial", 12]] },
  beneficiarioExige: [{ campo: "codigoTransmissao", formato: /^\d{15}$/, descricao: "the código de transmissão (15 digits)" }],
  overrides: {
    // Santander shifts the header: tipo de inscrição at 17, CNPJ 18–32, código de transmissão 33–47 (LB Santander.php)
    headerArquivo: [
      B(9, 16),
      N("tipoInscricao", 17, 17, { src: "beneficiario.tipoInscricao" }),
      N("documento", 18, 32, { src: "beneficiario.documento", fmt: "taxid" }),
      A("codigoTransmissao", 33, 47, { src: "beneficiario.codigoTransmissao", fmt: "raw" }),
      B(48, 72),
      B(152, 157),
      B(167, 240),
    ],
    headerLote: [B(34, 53), A("codigoTransmissao", 54, 68, { src: "beneficiario.codigoTransmissao", fmt: "raw" }), B(69, 73)],
    P: [
      N("agencia", 18, 21, { src: "beneficiario.agencia" }),
      A("agenciaDv", 22, 22, { src: "beneficiario.agenciaDv", fmt: "raw" }),
      N("conta", 23, 31, { src: "beneficiario.conta" }),
      A("contaDv", 32, 32, { src: "beneficiario.contaDv", fmt: "raw" }),
      N("contaCobranca", 33, 41, { src: "beneficiario.conta" }),
      A("contaCobrancaDv", 42, 42, { src: "beneficiario.contaDv", fmt: "raw" }),
      B(43, 44),
      A("nossoNumero", 45, 57, {
        src: "titulo.nossoNumeroCampo",
        fmt: "template",
        tpl: "{titulo.nossoNumeroSequencial:12}{titulo.nossoNumeroDv}",
      }),
      A("tipoDocumento", 60, 60, { src: "titulo.tipoDocumento", fmt: "raw", default: "2" }),
      B(61, 62),
      Z(228, 229),
      B(230, 239),
    ],
    Q: [Z(213, 221), B(222, 232)],
    R: [B(200, 240)],
    trailerLote: [B(24, 240)],
    trailerArquivo: [B(30, 35)],
  },
};

/**
 * Ailos (085), "Manual Técnico de Cobrança Bancária – CNAB 240" v07 (2019): file layout 087, lote 045. The
 * nosso número is conta + DV + the boleto's 9-digit number, as in the barcode (banks.ts); the conta DV is
 * the one the boleto computes, and the header/P conta DV is the beneficiário's, so it is required.
 */
const AILOS: Cnab240Profile = {
  banco: "085",
  versaoArquivo: "087",
  versaoLote: "045",
  densidade: "00000",
  nossoNumeroTpl: "{beneficiario.conta:7}{titulo.nossoNumeroDv}{titulo.nossoNumeroSequencial:9}",
  nossoNumeroDv: { algo: "mod11S", tpl: [["beneficiario.conta", 7]] },
  segmentos: ["P", "Q", "R"],
  beneficiarioExige: [{ campo: "contaDv", formato: /^\d$/, descricao: "the conta DV (one digit)" }],
  overrides: {
    P: [
      DOC_NUM,
      N("agenciaCobradoraDv", 106, 106),
      // C028: 1 = baixar/devolver, 2 = não baixar (the manual has no 0); C029 days are Alfa, blank when absent
      N("baixaCodigo", 224, 224, { src: "titulo.baixa.codigo", default: "2" }),
      A("baixaDias", 225, 227, { src: "titulo.baixa.dias", fmt: "raw" }),
    ],
    trailerArquivo: [B(30, 35)],
  },
};

/**
 * Itaú (341), "Cobrança FEBRABAN 240" manual (May 2014), §3.1: agência 4 and conta 5 digits with the DAC of
 * agência/conta (the beneficiário's contaDv), the nosso número block carteira + 8 digits + its DAC (the
 * boleto's, whose rule depends on the carteira), no juros or desconto code, baixa days in two
 * digits, no moeda, the name of the pagador in 30 characters, blank lote and file trailers after the counts.
 */
const ITAU: Cnab240Profile = {
  banco: "341",
  versaoArquivo: "040",
  versaoLote: "030",
  densidade: "00000",
  nossoNumeroTpl: "",
  segmentos: ["P", "Q", "R"],
  nossoNumeroDvDoBoleto: true,
  semSlot: { jurosCodigo: true, descontoCodigo: true, baixaDiasMax: 99 },
  beneficiarioExige: [{ campo: "contaDv", formato: /^\d$/, descricao: "the DAC of agência/conta (one digit)" }],
  overrides: {
    headerArquivo: [
      Z(53, 53),
      N("agencia", 54, 57, { src: "beneficiario.agencia" }),
      B(58, 58),
      Z(59, 65),
      N("conta", 66, 70, { src: "beneficiario.conta" }),
      B(71, 71),
      A("dac", 72, 72, { src: "beneficiario.contaDv", fmt: "raw" }),
      Z(226, 228),
    ],
    headerLote: [
      Z(12, 13),
      Z(54, 54),
      N("agencia", 55, 58, { src: "beneficiario.agencia" }),
      B(59, 59),
      Z(60, 66),
      N("conta", 67, 71, { src: "beneficiario.conta" }),
      B(72, 72),
      A("dac", 73, 73, { src: "beneficiario.contaDv", fmt: "raw" }),
    ],
    P: [
      Z(18, 18),
      N("agencia", 19, 22, { src: "beneficiario.agencia" }),
      B(23, 23),
      Z(24, 30),
      N("conta", 31, 35, { src: "beneficiario.conta" }),
      B(36, 36),
      A("dac", 37, 37, { src: "beneficiario.contaDv", fmt: "raw" }),
      A("nossoNumero", 38, 49, {
        src: "titulo.nossoNumeroCampo",
        fmt: "template",
        tpl: "{beneficiario.carteira:3}{titulo.nossoNumeroSequencial:8}{titulo.nossoNumeroDv}",
      }),
      B(50, 57),
      Z(58, 62),
      A("numeroDocumento", 63, 72, { src: "titulo.numeroDocumento" }),
      B(73, 77),
      N("agenciaCobradoraDv", 106, 106),
      N("especie", 107, 108, { src: "titulo.especie", default: "01" }),
      Z(118, 118),
      Z(142, 142),
      ID_RIGHT,
      N("baixaDias", 225, 226, { src: "titulo.baixa.dias" }),
      Z(227, 239),
    ],
    Q: [A("pagadorNome", 34, 63, { src: "pagador.nome", truncate: true }), B(64, 73)],
    trailerLote: [B(24, 240)],
    trailerArquivo: [B(30, 35)],
  },
};

export const CNAB240_PROFILES: Readonly<Record<string, Cnab240Profile>> = {
  "001": {
    banco: "001",
    versaoArquivo: "083",
    versaoLote: "042",
    densidade: "00000",
    nossoNumeroTpl: "{beneficiario.convenioNumero:7}{titulo.nossoNumeroSequencial:10}",
    segmentos: ["P", "Q", "R"],
    overrides: {
      // 33–52: convênio(9) + "0014" + carteira(2) + variação(3) (LB Bb.php; brcobranca golden)
      headerArquivo: [
        A("convenio", 33, 52, {
          fmt: "template",
          tpl: "{beneficiario.convenioNumero:9}0014{beneficiario.carteira:2}{beneficiario.variacao:3}",
        }),
        Z(172, 191),
        Z(192, 211),
      ],
      headerLote: [
        A("convenio", 34, 53, {
          fmt: "template",
          tpl: "{beneficiario.convenioNumero:9}0014{beneficiario.carteira:2}{beneficiario.variacao:3}",
        }),
      ],
      P: [
        N("carteira", 58, 58, { src: "beneficiario.codigoCarteira", default: "7" }),
        A("tipoDocumento", 60, 60, { src: "titulo.tipoDocumento", fmt: "raw" }),
        N("emissaoBoleto", 61, 61, { src: "titulo.emissaoBoleto", default: "0" }),
        N("distribuicaoBoleto", 62, 62, { src: "titulo.distribuicaoBoleto", default: "0" }),
        DOC_NUM,
        ID_RIGHT,
      ],
      trailerLote: [Z(24, 240)],
      trailerArquivo: [B(30, 35)],
    },
  },
  "756": {
    banco: "756",
    versaoArquivo: "081",
    versaoLote: "040",
    densidade: "00000",
    // NN(10, with DV) + parcela(2) + modalidade(2) + "4" (formulário), left-aligned
    nossoNumeroTpl: "{titulo.nossoNumeroSequencial:10}{titulo.parcela:2}{beneficiario.modalidade:2}4",
    segmentos: ["P", "Q", "R"],
    overrides: {
      headerArquivo: [B(33, 52)],
      headerLote: [B(34, 53)],
      P: [
        N("formaCadastramento", 59, 59, { src: "titulo.formaCadastramento", default: "0" }),
        A("tipoDocumento", 60, 60, { src: "titulo.tipoDocumento", fmt: "raw" }),
        DOC_NUM,
        ID_RIGHT,
        A("baixaDias", 225, 227, { src: "titulo.baixa.dias", fmt: "raw" }),
      ],
    },
  },
  "748": {
    banco: "748",
    versaoArquivo: "081",
    versaoLote: "040",
    densidade: "01600",
    nossoNumeroTpl: "{titulo.nossoNumeroSequencial}",
    segmentos: ["P", "Q", "R"],
    overrides: {
      headerArquivo: [B(33, 52)],
      headerLote: [B(34, 53)],
      P: [DOC_NUM, ID_RIGHT],
      trailerLote: [Z(24, 29), Z(30, 46)],
    },
  },
  "104": CAIXA,
  "033": SANTANDER,
  "085": AILOS,
  "341": ITAU,
};

/** FEBRABAN generic profile for banks without a specific one (Bradesco, Banrisul; UNVERIFIED per bank). */
export function genericProfile(banco: string): Cnab240Profile {
  return {
    banco,
    versaoArquivo: "040",
    versaoLote: "030",
    densidade: "00000",
    nossoNumeroTpl: "{titulo.nossoNumero}",
    segmentos: ["P", "Q", "R"],
    overrides: {},
  };
}

const cache = new Map<string, RecordLayout>();
export function layout240(profile: Cnab240Profile, rec: Cnab240Record): RecordLayout {
  const key = `${profile.banco}:${rec}`;
  let l = cache.get(key);
  if (!l) {
    const ov = [...(profile.overrides[rec] ?? [])];
    if (rec === "P" && !ov.some((f) => f.start <= 57 && f.end >= 38))
      ov.push(A("nossoNumero", 38, 57, { src: "titulo.nossoNumeroCampo", fmt: "template", tpl: profile.nossoNumeroTpl }));
    l = ov.length ? overrideRecord(BASE[rec], `${rec}-${profile.banco}`, ov) : BASE[rec];
    cache.set(key, l);
  }
  return l;
}

/**
 * Banks whose CNAB 240 remessa is written with the FEBRABAN generic layout (UNVERIFIED per bank). The banks
 * added later have their own 240 layouts, or none, so they get no generic file the bank might reject.
 */
const GENERICO_240: ReadonlySet<string> = new Set(["237", "041"]);

export function profile240(banco: string): Cnab240Profile {
  const p = CNAB240_PROFILES[banco];
  if (p) return p;
  if (!GENERICO_240.has(banco))
    fail(
      "CNAB_LAYOUT_DESCONHECIDO",
      `no CNAB 240 remessa layout for bank ${banco} (have: ${[...Object.keys(CNAB240_PROFILES), ...GENERICO_240].sort().join(", ")})`,
      "banco",
    );
  return genericProfile(banco);
}

// ---------------------------------------------------------------- retorno (segments T and U)

const detalheRetorno = (seg: string): FieldDef[] => [
  N("banco", 1, 3, { src: "banco" }),
  A("lote", 4, 7, { fmt: "raw" }),
  K("tipoRegistro", 8, 8, "3", "N"),
  N("sequencial", 9, 13, { src: "seq" }),
  K("segmento", 14, 14, seg),
  A("brancos15", 15, 15, { fmt: "raw" }),
  A("movimento", 16, 17, { src: "ocorrencia", fmt: "raw" }),
];

export const SEGMENTO_T = defineRecord("segmentoT", 240, [
  ...detalheRetorno("T"),
  A("agencia", 18, 22, { src: "agencia", fmt: "raw" }),
  A("agenciaDv", 23, 23, { fmt: "raw" }),
  A("conta", 24, 36, { src: "conta", fmt: "raw" }),
  A("agContaDv", 37, 37, { fmt: "raw" }),
  A("nossoNumero", 38, 57, { src: "nossoNumero", fmt: "raw" }),
  A("carteira", 58, 58, { src: "carteira", fmt: "raw" }),
  A("seuNumero", 59, 73, { src: "numeroDocumento", fmt: "raw" }),
  N("vencimento", 74, 81, { src: "vencimento", fmt: "date8" }),
  N("valor", 82, 96, { src: "valorCentavos", fmt: "cents" }),
  A("bancoCobrador", 97, 99, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 100, 105, { src: "agenciaRecebedora", fmt: "raw" }),
  A("identificacaoTitulo", 106, 130, { src: "id", fmt: "raw", align: "right" }),
  A("moeda", 131, 132, { fmt: "raw" }),
  A("pagadorTipoInscricao", 133, 133, { src: "pagador.tipoInscricao", fmt: "raw" }),
  A("pagadorDocumento", 134, 148, { src: "pagador.documento", fmt: "raw" }),
  A("pagadorNome", 149, 188, { src: "pagador.nome", fmt: "raw" }),
  A("contrato", 189, 198, { fmt: "raw" }),
  N("tarifa", 199, 213, { src: "tarifaCentavos", fmt: "cents" }),
  A("motivos", 214, 223, { src: "motivosRaw", fmt: "raw" }),
  A("brancos224", 224, 240, { fmt: "raw" }),
]);

export const SEGMENTO_U = defineRecord("segmentoU", 240, [
  ...detalheRetorno("U"),
  N("juros", 18, 32, { src: "jurosCentavos", fmt: "cents" }),
  N("desconto", 33, 47, { src: "descontoCentavos", fmt: "cents" }),
  N("abatimento", 48, 62, { src: "abatimentoCentavos", fmt: "cents" }),
  N("iof", 63, 77, { src: "iofCentavos", fmt: "cents" }),
  N("valorPago", 78, 92, { src: "valorPagoCentavos", fmt: "cents" }),
  N("valorLiquido", 93, 107, { src: "valorLiquidoCentavos", fmt: "cents" }),
  N("outrasDespesas", 108, 122, { src: "outrasDespesasCentavos", fmt: "cents" }),
  N("outrosCreditos", 123, 137, { src: "outrosCreditosCentavos", fmt: "cents" }),
  N("dataOcorrencia", 138, 145, { src: "dataOcorrencia", fmt: "date8" }),
  N("dataCredito", 146, 153, { src: "dataCredito", fmt: "date8" }),
  A("resto", 154, 240, { fmt: "raw" }),
]);

/** Retorno segment T per bank: FEBRABAN positions unless the bank moves them (errata 3 and 5). */
export const SEGMENTO_T_POR_BANCO: Readonly<Record<string, RecordLayout>> = {
  // Caixa SIGCB: 17-digit NN at 40–56 and its DV at 57 (errata 5)
  "104": overrideRecord(SEGMENTO_T, "segmentoT-104", [
    A("nnPrefixo", 38, 39, { fmt: "raw" }),
    A("nossoNumero", 40, 56, { src: "nossoNumero", fmt: "raw" }),
    A("nossoNumeroDv", 57, 57, { src: "nossoNumeroDv", fmt: "raw" }),
  ]),
  // Santander: its own T positions (errata 3; laravel-boleto Santander 240 file)
  "033": defineRecord("segmentoT-033", 240, [
    ...detalheRetorno("T"),
    A("agencia", 18, 21, { src: "agencia", fmt: "raw" }),
    A("agenciaDv", 22, 22, { fmt: "raw" }),
    A("conta", 23, 32, { src: "conta", fmt: "raw" }),
    A("brancos33", 33, 40, { fmt: "raw" }),
    A("nossoNumero", 41, 53, { src: "nossoNumero", fmt: "raw" }),
    A("carteira", 54, 54, { src: "carteira", fmt: "raw" }),
    A("seuNumero", 55, 69, { src: "numeroDocumento", fmt: "raw" }),
    N("vencimento", 70, 77, { src: "vencimento", fmt: "date8" }),
    N("valor", 78, 92, { src: "valorCentavos", fmt: "cents" }),
    A("bancoCobrador", 93, 95, { src: "bancoRecebedor", fmt: "raw" }),
    A("agenciaCobradora", 96, 100, { src: "agenciaRecebedora", fmt: "raw" }),
    A("identificacaoTitulo", 101, 125, { src: "id", fmt: "raw", align: "right" }),
    A("moeda", 126, 127, { fmt: "raw" }),
    A("pagadorTipoInscricao", 128, 128, { src: "pagador.tipoInscricao", fmt: "raw" }),
    A("pagadorDocumento", 129, 143, { src: "pagador.documento", fmt: "raw" }),
    A("pagadorNome", 144, 183, { src: "pagador.nome", fmt: "raw" }),
    A("contaCobranca", 184, 193, { fmt: "raw" }),
    N("tarifa", 194, 208, { src: "tarifaCentavos", fmt: "cents" }),
    A("motivos", 209, 218, { src: "motivosRaw", fmt: "raw" }),
    A("brancos219", 219, 240, { fmt: "raw" }),
  ]),
  // Itaú: its own T positions (Itaú "Cobrança FEBRABAN 240" manual, May 2014, §3.2): agência 19–22, conta
  // 31–35 + DAC 37, carteira 38–40, nosso número 41–48 + DAC 49, seu número 59–68, errors 214–221 and the
  // liquidation channel 222–223
  "341": defineRecord("segmentoT-341", 240, [
    ...detalheRetorno("T"),
    A("zeros18", 18, 18, { fmt: "raw" }),
    A("agencia", 19, 22, { src: "agencia", fmt: "raw" }),
    A("zeros23", 23, 30, { fmt: "raw" }),
    A("conta", 31, 35, { src: "conta", fmt: "raw" }),
    A("zeros36", 36, 36, { fmt: "raw" }),
    A("agContaDv", 37, 37, { fmt: "raw" }),
    A("carteira", 38, 40, { src: "carteira", fmt: "raw" }),
    A("nossoNumero", 41, 48, { src: "nossoNumero", fmt: "raw" }),
    A("nossoNumeroDv", 49, 49, { src: "nossoNumeroDv", fmt: "raw" }),
    A("brancos50", 50, 58, { fmt: "raw" }),
    A("seuNumero", 59, 68, { src: "numeroDocumento", fmt: "raw" }),
    A("brancos69", 69, 73, { fmt: "raw" }),
    N("vencimento", 74, 81, { src: "vencimento", fmt: "date8" }),
    N("valor", 82, 96, { src: "valorCentavos", fmt: "cents" }),
    A("zeros97", 97, 99, { fmt: "raw" }),
    A("agenciaCobradora", 100, 105, { src: "agenciaRecebedora", fmt: "raw" }),
    A("identificacaoTitulo", 106, 130, { src: "id", fmt: "raw", align: "right" }),
    A("zeros131", 131, 132, { fmt: "raw" }),
    A("pagadorTipoInscricao", 133, 133, { src: "pagador.tipoInscricao", fmt: "raw" }),
    A("pagadorDocumento", 134, 148, { src: "pagador.documento", fmt: "raw" }),
    A("pagadorNome", 149, 178, { src: "pagador.nome", fmt: "raw" }),
    A("brancos179", 179, 198, { fmt: "raw" }),
    N("tarifa", 199, 213, { src: "tarifaCentavos", fmt: "cents" }),
    A("motivos", 214, 221, { src: "motivosRaw", fmt: "raw" }),
    A("codigoLiquidacao", 222, 223, { src: "codigoLiquidacao", fmt: "raw" }),
    A("brancos224", 224, 240, { fmt: "raw" }),
  ]),
};

export function segmentoT(banco: string): RecordLayout {
  return SEGMENTO_T_POR_BANCO[banco] ?? SEGMENTO_T;
}
