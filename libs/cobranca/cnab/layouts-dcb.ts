/**
 * BRB's "DCB" remessa (version 077) as data: the header, the título record 01 and the optional record 02,
 * column for column from the sheet "Leiaute Remessa 077" of "BRB Cobrança – Manual e Leiautes" (May 2017;
 * cobranca.md §3.15, decision 0027). Not CNAB 400 of any other bank: no sequence column, no trailer.
 * The per-título values BRB codes its own way are derived in remessa-brb.ts under `dcb`.
 */
import { A, B, K, N, Z, defineRecord } from "./record.js";

/** 10–19 of the header, 6–15 of record 01: the código do beneficiário, agência (3) + conta (7). */
const codigoBeneficiario = (start: number) =>
  N("codigoBeneficiario", start, start + 9, {
    src: "beneficiario.codigoBeneficiario",
    fmt: "template",
    tpl: "{beneficiario.agencia:3}{beneficiario.conta:7}",
  });

/**
 * The manual's header is 39 positions; its example file writes it as a 400-position line, blank after 39,
 * as every record of the file is (README of the fixtures).
 */
export const DCB_HEADER = defineRecord("dcbHeader", 400, [
  K("literal", 1, 3, "DCB"),
  K("versao", 4, 6, "001", "N"),
  K("arquivo", 7, 9, "077", "N"),
  codigoBeneficiario(10),
  N("dataFormatacao", 20, 27, { src: "arquivo.aaaammdd" }),
  N("horaFormatacao", 28, 33, { src: "arquivo.hora" }),
  // "Informar a quantidade Header+Registros"
  N("quantidadeRegistros", 34, 39, { src: "arquivo.registros" }),
  B(40, 400),
]);

export const DCB_REGISTRO_01 = defineRecord("dcbRegistro01", 400, [
  K("tipoRegistro", 1, 2, "01", "N"),
  N("incremento", 3, 5, { src: "dcb.incremento" }),
  codigoBeneficiario(6),
  // MSSSSSS070dd: modalidade, sequencial, 070, duplo dígito
  N("nossoNumero", 16, 27, { src: "dcb.nossoNumero" }),
  A("seuNumero", 28, 52, { src: "titulo.id", fmt: "raw" }),
  A("nomePagador", 53, 97, { src: "pagador.nome", truncate: true }),
  A("enderecoPagador", 98, 157, { src: "pagador.endereco", truncate: true }),
  A("bairroPagador", 158, 172, { src: "pagador.bairro", truncate: true }),
  A("cidadePagador", 173, 194, { src: "pagador.cidade", truncate: true }),
  A("ufPagador", 195, 196, { src: "pagador.uf", fmt: "raw" }),
  N("cepPagador", 197, 204, { src: "pagador.cep" }),
  N("tipoPagador", 205, 205, { src: "pagador.tipoInscricao" }),
  // "Se for CPF, preencher as posições 206 a 216 e as demais ficam em branco"
  A("documentoPagador", 206, 219, { src: "pagador.documento", fmt: "raw" }),
  Z(220, 223), // identificador sequencial de carnê: not a carnê
  K("tipoCobranca", 224, 224, "0", "N"), // simples
  N("especie", 225, 226, { src: "dcb.especie" }),
  K("moeda", 227, 228, "02", "N"), // real
  N("indicadorImpressao", 229, 229, { src: "dcb.impressao" }),
  N("agenciaCobradora", 230, 233, { src: "beneficiario.agencia" }),
  N("emissao", 234, 241, { src: "titulo.emissao", fmt: "date8" }),
  K("condicaoPagamento", 242, 242, "0", "N"), // no vencimento
  N("vencimento", 243, 250, { src: "titulo.vencimento", fmt: "date8" }),
  N("valor", 251, 265, { src: "titulo.valorCentavos", fmt: "cents" }),
  N("abatimento", 266, 275, { src: "titulo.abatimentoCentavos", fmt: "cents" }),
  Z(276, 285), // desconto por antecipação: the título's desconto goes to desconto 1
  N("iof", 286, 292, { src: "titulo.iofCentavos", fmt: "cents" }),
  Z(293, 295), // prazo de carência dos juros: juros from the day after the vencimento
  N("tipoJuros", 296, 297, { src: "dcb.tipoJuros" }),
  N("valorJuros", 298, 307, { src: "dcb.valorJuros", fmt: "cents" }),
  N("tipoDesconto", 308, 308, { src: "dcb.tipoDesconto" }),
  N("valorDesconto1", 309, 318, { src: "dcb.valorDesconto", fmt: "cents" }),
  N("dataDesconto1", 319, 326, { src: "dcb.dataDesconto", fmt: "date8" }),
  Z(327, 362), // descontos 2 and 3: a título carries one desconto
  N("instrucao1", 363, 364, { src: "dcb.instrucao1" }),
  N("prazoInstrucao1", 365, 367, { src: "dcb.prazoInstrucao1" }),
  N("instrucao2", 368, 369, { src: "dcb.instrucao2" }),
  N("prazoInstrucao2", 370, 372, { src: "dcb.prazoInstrucao2" }),
  N("instrucao3", 373, 374, { src: "dcb.instrucao3" }),
  N("prazoInstrucao3", 375, 377, { src: "dcb.prazoInstrucao3" }),
  N("valorInstrucao", 378, 385, { src: "dcb.valorInstrucao", fmt: "cents" }),
  N("prazoProtesto", 386, 388, { src: "dcb.prazoProtesto" }),
  N("localPagamento", 389, 390, { src: "dcb.localPagamento" }),
  N("distribuicao", 391, 391, { src: "dcb.distribuicao" }),
  B(392, 400),
]);

/** Optional: the sacador/avalista and the message of a título, right after its record 01. */
export const DCB_REGISTRO_02 = defineRecord("dcbRegistro02", 400, [
  K("tipoRegistro", 1, 2, "02", "N"),
  A("nomeSacador", 3, 47, { src: "avalista.nome", truncate: true }),
  N("tipoSacador", 48, 48, { src: "avalista.tipoInscricao" }),
  // N in the manual's table, but its example writes it as 206–219 of record 01: left-aligned, blank-filled
  A("documentoSacador", 49, 62, { src: "avalista.documento", fmt: "raw" }),
  Z(63, 96), // rateio: código and three values
  A("mensagem1", 97, 161, { src: "titulo.mensagem1", truncate: true }),
  B(162, 400), // mensagens 2–4 and the blank tail
]);
