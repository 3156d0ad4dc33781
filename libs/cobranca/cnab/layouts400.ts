/**
 * CNAB 400 as data: the remessa records (header, detalhe, optional records, trailers) and the retorno
 * details of each bank, by its manual (cobranca.md §3, §4.3, §5.2 and the golden files' README).
 */
import { A, B, K, N, type RecordLayout, Z, defineRecord, overrideRecord } from "./record.js";

const seq = N("sequencial", 395, 400, { src: "seq" });

// The stretches several banks' CNAB 400 remessa details share, position for position and filled the same
// way; a bank whose manual fills a stretch otherwise (another default, another source) keeps its own fields.
/** 2–17: the beneficiário's inscrição (type and CPF/CNPJ). */
const BENEFICIARIO_INSCRICAO = [
  N("tipoInscricao", 2, 3, { src: "beneficiario.tipoInscricao400" }),
  N("documento", 4, 17, { src: "beneficiario.documento", fmt: "taxid" }),
];
/** 121–139: vencimento and valor. */
const VENCIMENTO_E_VALOR = [
  N("vencimento", 121, 126, { src: "titulo.vencimento", fmt: "date6" }),
  N("valor", 127, 139, { src: "titulo.valorCentavos", fmt: "cents" }),
];
/** 109–139: ocorrência, número do documento (blank, or `semDocumento` when the título has none), vencimento and valor. */
const ocorrenciaAteValor = (semDocumento?: string) => [
  N("ocorrencia", 109, 110, { src: "titulo.movimento" }),
  A("numeroDocumento", 111, 120, { src: "titulo.numeroDocumento", ...(semDocumento === undefined ? {} : { default: semDocumento }) }),
  ...VENCIMENTO_E_VALOR,
];
/** 148–156: espécie (duplicata mercantil unless given), aceite, emissão. */
const ESPECIE_ACEITE_EMISSAO = [
  N("especie", 148, 149, { src: "titulo.especie", default: "01" }),
  A("aceite", 150, 150, { src: "titulo.aceite", fmt: "raw", default: "N" }),
  N("emissao", 151, 156, { src: "titulo.emissao", fmt: "date6" }),
];
/** 174–192: the desconto's date and value. */
const DESCONTO = [
  N("descontoData", 174, 179, { src: "titulo.desconto.data", fmt: "date6" }),
  N("descontoValor", 180, 192, { src: "titulo.desconto.valor", fmt: "cents" }),
];
/** 219–234: the pagador's inscrição (type and CPF/CNPJ). */
const PAGADOR_INSCRICAO = [
  N("pagadorTipoInscricao", 219, 220, { src: "pagador.tipoInscricao400" }),
  N("pagadorDocumento", 221, 234, { src: "pagador.documento", fmt: "taxid" }),
];
/** 206–234: abatimento and the pagador's inscrição. */
const ABATIMENTO_E_PAGADOR = [N("abatimento", 206, 218, { src: "titulo.abatimentoCentavos", fmt: "cents" }), ...PAGADOR_INSCRICAO];
/** 148–234: espécie, aceite, emissão, instruções, encargos and the pagador's inscrição. */
const ESPECIE_ATE_PAGADOR = [
  ...ESPECIE_ACEITE_EMISSAO,
  N("instrucao1", 157, 158, { src: "titulo.instrucao1" }),
  N("instrucao2", 159, 160, { src: "titulo.instrucao2" }),
  N("moraDia", 161, 173, { src: "titulo.juros.valor", fmt: "cents" }),
  ...DESCONTO,
  N("iof", 193, 205, { src: "titulo.iofCentavos", fmt: "cents" }),
  ...ABATIMENTO_E_PAGADOR,
];
/** 275–334: the pagador's endereço, bairro and CEP. */
const PAGADOR_ENDERECO_E_CEP = [
  A("pagadorEndereco", 275, 314, { src: "pagador.endereco", truncate: true }),
  A("pagadorBairro", 315, 326, { src: "pagador.bairro", truncate: true }),
  N("cep", 327, 334, { src: "pagador.cep" }),
];
/** 335–351: the pagador's cidade and UF. */
const PAGADOR_CIDADE_E_UF = [A("cidade", 335, 349, { src: "pagador.cidade", truncate: true }), A("uf", 350, 351, { src: "pagador.uf" })];

const headerRemessa = (name: string, empresa: ReturnType<typeof A>[], tail: ReturnType<typeof A>[]): RecordLayout =>
  defineRecord(name, 400, [
    K("tipoRegistro", 1, 1, "0", "N"),
    K("operacao", 2, 2, "1", "N"),
    K("literalRemessa", 3, 9, "REMESSA"),
    K("servico", 10, 11, "01", "N"),
    K("literalServico", 12, 26, "COBRANCA"),
    ...empresa,
    A("nomeEmpresa", 47, 76, { src: "beneficiario.nome", truncate: true }),
    N("banco", 77, 79, { src: "banco" }),
    A("nomeBanco", 80, 94, { src: "bancoNome", truncate: true }),
    N("dataGravacao", 95, 100, { src: "arquivo.data", fmt: "date6" }),
    ...tail,
    seq,
  ]);

export const BRADESCO_400_HEADER = headerRemessa(
  "bradesco400Header",
  [N("codigoEmpresa", 27, 46, { src: "beneficiario.convenio" })],
  [B(101, 108), K("sistema", 109, 110, "MX"), N("nsa", 111, 117, { src: "arquivo.nsa" }), B(118, 394)],
);

export const BRADESCO_400_DETALHE = defineRecord("bradesco400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  Z(2, 6),
  Z(7, 7),
  Z(8, 12),
  Z(13, 19),
  Z(20, 20),
  K("zero", 21, 21, "0", "N"),
  N("carteira", 22, 24, { src: "beneficiario.carteira" }),
  N("agencia", 25, 29, { src: "beneficiario.agencia" }),
  N("conta", 30, 36, { src: "beneficiario.conta" }),
  A("contaDv", 37, 37, { src: "beneficiario.contaDv", fmt: "raw" }),
  A("controleParticipante", 38, 62, { src: "titulo.id", fmt: "raw" }),
  Z(63, 65),
  N("multaCodigo", 66, 66, { src: "titulo.multa.codigo" }),
  N("multaPercentual", 67, 70, { src: "titulo.multa.valor", fmt: "cents" }),
  N("nossoNumero", 71, 81, { src: "titulo.nossoNumeroSequencial" }),
  A("nossoNumeroDv", 82, 82, { src: "titulo.nossoNumeroDv", fmt: "raw" }),
  N("descontoDia", 83, 92, { src: "titulo.descontoPorDia", fmt: "cents" }),
  N("emissaoBoleto", 93, 93, { src: "titulo.emissaoBoleto", default: "2" }),
  K("debitoAutomatico", 94, 94, "N"),
  B(95, 105),
  K("avisoDebito", 106, 106, "2", "N"),
  B(107, 108),
  ...ocorrenciaAteValor(),
  Z(140, 142),
  Z(143, 147),
  ...ESPECIE_ATE_PAGADOR,
  A("pagadorNome", 235, 274, { src: "pagador.nome", truncate: true }),
  // brcobranca/BRAD-400: endereço(20) + " " + cidade(15) + UF in the 40 positions
  A("pagadorEndereco", 275, 314, {
    src: "pagador.enderecoCompleto",
    fmt: "template",
    tpl: "{pagador.endereco<20} {pagador.cidade<15}{pagador.uf<2}",
  }),
  A("mensagem1", 315, 326, { src: "titulo.mensagem1", truncate: true }),
  N("cep", 327, 334, { src: "pagador.cep" }),
  A("avalista", 335, 394, { src: "avalista.nome", truncate: true }),
  seq,
]);

/** Cresol (133) takes Bradesco's CNAB 400 records; its espécie table puts duplicata mercantil at 02. */
export const CRESOL_400_DETALHE = overrideRecord(BRADESCO_400_DETALHE, "cresol400Detalhe", [
  N("especie", 148, 149, { src: "titulo.especie", default: "02" }),
]);

export const ITAU_400_HEADER = headerRemessa(
  "itau400Header",
  [
    N("agencia", 27, 30, { src: "beneficiario.agencia" }),
    Z(31, 32),
    N("conta", 33, 37, { src: "beneficiario.conta" }),
    A("contaDv", 38, 38, { src: "beneficiario.contaDv", fmt: "raw" }),
    B(39, 46),
  ],
  [B(101, 394)],
);

export const ITAU_400_DETALHE = defineRecord("itau400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...BENEFICIARIO_INSCRICAO,
  N("agencia", 18, 21, { src: "beneficiario.agencia" }),
  Z(22, 23),
  N("conta", 24, 28, { src: "beneficiario.conta" }),
  A("contaDv", 29, 29, { src: "beneficiario.contaDv", fmt: "raw" }),
  B(30, 33),
  N("instrucaoAlegacao", 34, 37, { src: "titulo.instrucaoCancelada" }),
  A("usoEmpresa", 38, 62, { src: "titulo.id", fmt: "raw" }),
  N("nossoNumero", 63, 70, { src: "titulo.nossoNumeroSequencial" }),
  N("quantidadeMoeda", 71, 83),
  N("carteira", 84, 86, { src: "beneficiario.carteira" }),
  B(87, 107),
  A("codigoCarteira", 108, 108, { src: "beneficiario.codigoCarteira", fmt: "raw", default: "I" }),
  ...ocorrenciaAteValor("0000000000"),
  K("banco", 140, 142, "341", "N"),
  Z(143, 147),
  ...ESPECIE_ATE_PAGADOR,
  A("pagadorNome", 235, 264, { src: "pagador.nome", truncate: true }),
  B(265, 274),
  ...PAGADOR_ENDERECO_E_CEP,
  ...PAGADOR_CIDADE_E_UF,
  A("avalista", 352, 381, { src: "avalista.nome", truncate: true }),
  B(382, 385),
  N("dataMora", 386, 391, { src: "titulo.juros.data", fmt: "date6" }),
  N("prazo", 392, 393, { src: "titulo.protesto.dias" }),
  B(394, 394),
  seq,
]);

/** Itaú optional type-2 record: multa. */
export const ITAU_400_MULTA = defineRecord("itau400Multa", 400, [
  K("tipoRegistro", 1, 1, "2", "N"),
  N("multaCodigo", 2, 2, { src: "titulo.multa.codigo" }),
  N("multaData", 3, 10, { src: "titulo.multa.data", fmt: "date8" }),
  N("multaValor", 11, 23, { src: "titulo.multa.valor", fmt: "cents" }),
  B(24, 394),
  seq,
]);

export const TRAILER_400 = defineRecord("trailer400", 400, [K("tipoRegistro", 1, 1, "9", "N"), B(2, 394), seq]);

// Banco do Brasil CBR641: convênio of 7 digits, detail type 7. The nosso número is the convênio followed
// by a 10-digit sequence, without a check digit.
export const BB_400_HEADER = headerRemessa(
  "bb400Header",
  [
    N("agencia", 27, 30, { src: "beneficiario.agencia" }),
    A("agenciaDv", 31, 31, { src: "beneficiario.agenciaDv", fmt: "raw" }),
    N("conta", 32, 39, { src: "beneficiario.conta" }),
    A("contaDv", 40, 40, { src: "beneficiario.contaDv", fmt: "raw" }),
    Z(41, 46),
  ],
  [
    N("nsa", 101, 107, { src: "arquivo.nsa" }),
    B(108, 129),
    N("convenioLider", 130, 136, { src: "beneficiario.convenioLider" }),
    B(137, 394),
  ],
);

export const BB_400_DETALHE = defineRecord("bb400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "7", "N"),
  ...BENEFICIARIO_INSCRICAO,
  N("agencia", 18, 21, { src: "beneficiario.agencia" }),
  A("agenciaDv", 22, 22, { src: "beneficiario.agenciaDv", fmt: "raw" }),
  N("conta", 23, 30, { src: "beneficiario.conta" }),
  A("contaDv", 31, 31, { src: "beneficiario.contaDv", fmt: "raw" }),
  N("convenio", 32, 38, { src: "beneficiario.convenio" }),
  A("controleParticipante", 39, 63, { src: "titulo.id", fmt: "raw" }),
  N("nossoNumeroConvenio", 64, 70, { src: "beneficiario.convenio" }),
  N("nossoNumero", 71, 80, { src: "titulo.nossoNumeroSequencial" }),
  Z(81, 82),
  Z(83, 84),
  B(85, 87),
  B(88, 88),
  B(89, 91),
  N("variacao", 92, 94, { src: "beneficiario.variacao" }),
  Z(95, 95),
  Z(96, 101),
  A("tipoCobranca", 102, 106, { src: "beneficiario.tipoCobranca", fmt: "raw" }),
  N("carteira", 107, 108, { src: "beneficiario.carteira" }),
  N("comando", 109, 110, { src: "titulo.movimento" }),
  A("numeroDocumento", 111, 120, { src: "titulo.numeroDocumento", default: "0000000000" }),
  ...VENCIMENTO_E_VALOR,
  K("banco", 140, 142, "001", "N"),
  Z(143, 146),
  B(147, 147),
  ...ESPECIE_ATE_PAGADOR,
  A("pagadorNome", 235, 271, { src: "pagador.nome", truncate: true }),
  B(272, 274),
  ...PAGADOR_ENDERECO_E_CEP,
  ...PAGADOR_CIDADE_E_UF,
  A("mensagem", 352, 391, { src: "titulo.mensagem1", truncate: true }),
  N("prazoProtesto", 392, 393, { src: "titulo.protesto.dias" }),
  B(394, 394),
  seq,
]);

// Santander: the código de transmissão identifies the beneficiário; layout version 058.
export const SANTANDER_400_HEADER = headerRemessa(
  "santander400Header",
  [N("codigoTransmissao", 27, 46, { src: "beneficiario.codigoTransmissao" })],
  [Z(101, 116), B(117, 391), K("versaoLayout", 392, 394, "058", "N")],
);

export const SANTANDER_400_DETALHE = defineRecord("santander400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...BENEFICIARIO_INSCRICAO,
  N("codigoTransmissao", 18, 37, { src: "beneficiario.codigoTransmissao" }),
  A("controleParticipante", 38, 62, { src: "titulo.id", fmt: "raw" }),
  N("nossoNumero", 63, 69, { src: "titulo.nossoNumeroSequencial" }),
  A("nossoNumeroDv", 70, 70, { src: "titulo.nossoNumeroDv", fmt: "raw" }),
  Z(71, 76),
  B(77, 77),
  N("multaCodigo", 78, 78, { src: "titulo.multa.codigo" }),
  N("multaPercentual", 79, 82, { src: "titulo.multa.valor", fmt: "cents" }),
  Z(83, 84),
  Z(85, 97),
  B(98, 101),
  N("multaData", 102, 107, { src: "titulo.multa.dataInformada", fmt: "date6" }),
  N("codigoCarteira", 108, 108, { src: "beneficiario.codigoCarteira", default: "1" }),
  ...ocorrenciaAteValor("0000000000"),
  K("banco", 140, 142, "033", "N"),
  Z(143, 147),
  ...ESPECIE_ATE_PAGADOR,
  A("pagadorNome", 235, 274, { src: "pagador.nome", truncate: true }),
  ...PAGADOR_ENDERECO_E_CEP,
  ...PAGADOR_CIDADE_E_UF,
  A("avalista", 352, 381, { src: "avalista.nome", truncate: true }),
  B(382, 382),
  K("identificadorComplemento", 383, 383, "I"),
  A("complemento", 384, 385, { src: "beneficiario.complementoConta", fmt: "raw" }),
  B(386, 391),
  N("prazoProtesto", 392, 393, { src: "titulo.protesto.dias" }),
  B(394, 394),
  seq,
]);

/**
 * Santander CNAB 400 remessa PIX record (type 8), right after its título's detail: how the PIX may be
 * paid, and the beneficiário's DICT key and txid the bank ties to the boleto (BRC
 * `remessa/cnab400/santander_pix.rb` and its fixture; cobranca.md §4.3). Values as the fixture writes
 * them for "as the beneficiário's profile says" (00): one payment, of the título's value (type 2).
 */
export const SANTANDER_400_PIX_REMESSA = defineRecord("santander400PixRemessa", 400, [
  K("tipoRegistro", 1, 1, "8", "N"),
  N("tipoPagamento", 2, 3, { src: "titulo.pix.tipoPagamento" }),
  N("quantidadePagamentos", 4, 5, { src: "titulo.pix.quantidadePagamentos" }),
  N("tipoValor", 6, 6, { src: "titulo.pix.tipoValor" }),
  N("valorMaximo", 7, 19, { src: "titulo.pix.valorMaximo", fmt: "cents" }),
  N("percentualMaximo", 20, 24, { src: "titulo.pix.percentualMaximo", fmt: "cents" }),
  N("valorMinimo", 25, 37, { src: "titulo.pix.valorMinimo", fmt: "cents" }),
  N("percentualMinimo", 38, 42, { src: "titulo.pix.percentualMinimo", fmt: "cents" }),
  N("tipoChave", 43, 43, { src: "titulo.pix.tipoChave" }),
  A("chave", 44, 120, { src: "titulo.pix.chave", fmt: "raw" }),
  A("txid", 121, 155, { src: "titulo.pix.txid", fmt: "raw" }),
  B(156, 394),
  seq,
]);

/** Santander's trailer carries the file's record count and the títulos' total. */
export const SANTANDER_400_TRAILER = defineRecord("santander400Trailer", 400, [
  K("tipoRegistro", 1, 1, "9", "N"),
  N("quantidadeRegistros", 2, 7, { src: "totais.registros" }),
  N("valorTotal", 8, 20, { src: "totais.valorCentavos", fmt: "cents" }),
  Z(21, 394),
  seq,
]);

// Unicred (136), "Cobrança Unicred – Troca Eletrônica Beneficiário – Padrão CNAB 400" (remessa) §5.5:
// the código do beneficiário identifies the account; the bank's own codes for multa, mora, desconto and
// protesto are derived from the título's (remessa.ts).
export const UNICRED_400_HEADER = headerRemessa(
  "unicred400Header",
  [N("codigoBeneficiario", 27, 46, { src: "beneficiario.convenio" })],
  [B(101, 107), Z(108, 110), N("nsa", 111, 117, { src: "arquivo.nsa" }), B(118, 394)],
);

export const UNICRED_400_DETALHE = defineRecord("unicred400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  N("agencia", 2, 6, { src: "beneficiario.agencia" }),
  A("agenciaDv", 7, 7, { src: "beneficiario.agenciaDv", fmt: "raw" }),
  N("conta", 8, 19, { src: "beneficiario.conta" }),
  A("contaDv", 20, 20, { src: "beneficiario.contaDv", fmt: "raw" }),
  K("zero", 21, 21, "0", "N"),
  N("carteira", 22, 24, { src: "beneficiario.carteira", default: "21" }),
  Z(25, 37),
  A("controleParticipante", 38, 62, { src: "titulo.id", fmt: "raw" }),
  K("banco", 63, 65, "136", "N"),
  Z(66, 67),
  B(68, 92),
  Z(93, 93),
  N("multaCodigo", 94, 94, { src: "titulo.codigos400.multa" }),
  N("multaValor", 95, 104, { src: "titulo.multa.valor", fmt: "cents" }),
  N("moraTipo", 105, 105, { src: "titulo.codigos400.mora" }),
  K("descontavel", 106, 106, "N"),
  B(107, 108),
  ...ocorrenciaAteValor(),
  Z(140, 149),
  N("descontoCodigo", 150, 150, { src: "titulo.codigos400.desconto" }),
  N("emissao", 151, 156, { src: "titulo.emissao", fmt: "date6" }),
  Z(157, 157),
  N("protestoCodigo", 158, 158, { src: "titulo.protesto.codigo", default: "3" }),
  N("protestoDias", 159, 160, { src: "titulo.protesto.dias" }),
  N("moraValor", 161, 173, { src: "titulo.juros.valor", fmt: "cents" }),
  ...DESCONTO,
  N("nossoNumero", 193, 202, { src: "titulo.nossoNumeroSequencial" }),
  A("nossoNumeroDv", 203, 203, { src: "titulo.nossoNumeroDv", fmt: "raw" }),
  Z(204, 205),
  ...ABATIMENTO_E_PAGADOR,
  A("pagadorNome", 235, 274, { src: "pagador.nome", truncate: true }),
  ...PAGADOR_ENDERECO_E_CEP,
  A("cidade", 335, 354, { src: "pagador.cidade", truncate: true }),
  A("uf", 355, 356, { src: "pagador.uf" }),
  A("avalista", 357, 394, { src: "avalista.nome", truncate: true }),
  seq,
]);

// Banco do Nordeste (004), "Leiaute de Arquivo Eletrônico Padrão CNAB 400 – Cobrança Bancária Banco do
// Nordeste" (July 2011) §6. The código do usuário (101–103) is the bank's EDI mailbox code.
export const BNB_400_HEADER = overrideRecord(
  headerRemessa(
    "bnb400Header",
    [
      N("agencia", 27, 30, { src: "beneficiario.agencia" }),
      Z(31, 32),
      N("conta", 33, 39, { src: "beneficiario.conta" }),
      A("contaDv", 40, 40, { src: "beneficiario.contaDv", fmt: "raw" }),
      B(41, 46),
    ],
    [A("codigoUsuario", 101, 103, { src: "beneficiario.convenio", fmt: "raw" }), B(104, 394)],
  ),
  "bnb400Header",
  // the manual's literal, with its dot (CNAB text would drop it)
  [K("nomeBanco", 80, 94, "B. DO NORDESTE")],
);

export const BNB_400_DETALHE = defineRecord("bnb400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  B(2, 17),
  N("agencia", 18, 21, { src: "beneficiario.agencia" }),
  Z(22, 23),
  N("conta", 24, 30, { src: "beneficiario.conta" }),
  A("contaDv", 31, 31, { src: "beneficiario.contaDv", fmt: "raw" }),
  N("multaPercentual", 32, 33, { src: "titulo.codigos400.multaPercentual" }),
  B(34, 37),
  A("controleParticipante", 38, 62, { src: "titulo.id", fmt: "raw" }),
  N("nossoNumero", 63, 69, { src: "titulo.nossoNumeroSequencial" }),
  A("nossoNumeroDv", 70, 70, { src: "titulo.nossoNumeroDv", fmt: "raw" }),
  Z(71, 80),
  Z(81, 86),
  Z(87, 99),
  B(100, 107),
  N("codigoCarteira", 108, 108, { src: "beneficiario.codigoCarteira", default: "4" }),
  ...ocorrenciaAteValor("0000000000"),
  Z(140, 142),
  Z(143, 146),
  B(147, 147),
  ...ESPECIE_ACEITE_EMISSAO,
  N("instrucao", 157, 160, { src: "titulo.instrucao1" }),
  N("jurosDia", 161, 173, { src: "titulo.juros.valor", fmt: "cents" }),
  ...DESCONTO,
  N("ioc", 193, 205, { src: "titulo.iofCentavos", fmt: "cents" }),
  ...ABATIMENTO_E_PAGADOR,
  A("pagadorNome", 235, 274, { src: "pagador.nome", truncate: true }),
  A("pagadorEndereco", 275, 314, { src: "pagador.endereco", truncate: true }),
  A("pagadorComplemento", 315, 326, { src: "pagador.bairro", truncate: true }),
  N("cep", 327, 334, { src: "pagador.cep" }),
  ...PAGADOR_CIDADE_E_UF,
  A("avalista", 352, 391, { src: "avalista.nome", truncate: true }),
  N("prazoProtesto", 392, 393, { src: "titulo.codigos400.prazoProtesto" }),
  K("moeda", 394, 394, "0", "N"),
  seq,
]);

// Banco Safra (422), "Manual / Layout de Cobrança CNAB 400 – Banco Safra S.A." (2016) §6.1: the empresa is
// agência (5, with DV) + conta de cobrança (9, with DV); every record ends with the file's number (392–394).
const SAFRA_EMPRESA = "{beneficiario.agencia:4}{beneficiario.agenciaDv}{beneficiario.conta:8}{beneficiario.contaDv}";
const safraNsa = N("numeroArquivo", 392, 394, { src: "arquivo.nsa3" });

export const SAFRA_400_HEADER = headerRemessa(
  "safra400Header",
  [A("codigoEmpresa", 27, 40, { fmt: "template", tpl: SAFRA_EMPRESA }), B(41, 46)],
  [B(101, 391), safraNsa],
);

export const SAFRA_400_DETALHE = defineRecord("safra400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...BENEFICIARIO_INSCRICAO,
  A("codigoEmpresa", 18, 31, { fmt: "template", tpl: SAFRA_EMPRESA }),
  B(32, 37),
  A("usoEmpresa", 38, 62, { src: "titulo.id", fmt: "raw" }),
  N("nossoNumero", 63, 70, { src: "titulo.nossoNumeroSequencial" }),
  A("nossoNumeroDv", 71, 71, { src: "titulo.nossoNumeroDv", fmt: "raw" }),
  B(72, 101),
  K("codigoIof", 102, 102, "0", "N"),
  K("moeda", 103, 104, "00", "N"),
  B(105, 105),
  N("instrucao3", 106, 107, { src: "titulo.codigos400.instrucao3" }),
  N("codigoCarteira", 108, 108, { src: "beneficiario.codigoCarteira", default: "1" }),
  N("ocorrencia", 109, 110, { src: "titulo.movimento" }),
  A("seuNumero", 111, 120, { src: "titulo.numeroDocumento" }),
  ...VENCIMENTO_E_VALOR,
  K("bancoDepositario", 140, 142, "422", "N"),
  Z(143, 147),
  ...ESPECIE_ACEITE_EMISSAO,
  N("instrucao1", 157, 158, { src: "titulo.codigos400.instrucao1" }),
  N("instrucao2", 159, 160, { src: "titulo.codigos400.instrucao2" }),
  N("juros", 161, 173, { src: "titulo.juros.valor", fmt: "cents" }),
  ...DESCONTO,
  N("iof", 193, 205, { src: "titulo.iofCentavos", fmt: "cents" }),
  // abatimento, or (entrada with instrução 16) the multa: its date (6) + rate 99v99 (4) + 000 (nota 6.1.8)
  N("abatimentoOuMulta", 206, 218, { src: "titulo.codigos400.abatimentoOuMulta" }),
  ...PAGADOR_INSCRICAO,
  A("pagadorNome", 235, 274, { src: "pagador.nome", truncate: true }),
  A("pagadorEndereco", 275, 314, { src: "pagador.endereco", truncate: true }),
  A("pagadorBairro", 315, 324, { src: "pagador.bairro", truncate: true }),
  B(325, 326),
  N("cep", 327, 334, { src: "pagador.cep" }),
  ...PAGADOR_CIDADE_E_UF,
  A("avalista", 352, 381, { src: "avalista.nome", truncate: true }),
  B(382, 388),
  K("bancoEmitente", 389, 391, "422", "N"),
  safraNsa,
  seq,
]);

/** Safra's trailer: the títulos' count and total (369–391), the file's number. */
export const SAFRA_400_TRAILER = defineRecord("safra400Trailer", 400, [
  K("tipoRegistro", 1, 1, "9", "N"),
  B(2, 368),
  N("quantidade", 369, 376, { src: "totais.titulos" }),
  N("valorTotal", 377, 391, { src: "totais.valorCentavos", fmt: "cents" }),
  safraNsa,
  seq,
]);

// Banco Inter (077), "Manual CNAB400 – Emissão de boletos de cobrança" v1.1 (30/08/2021) §4. Inter assigns
// the nosso número: the remessa carries zeros where it goes (90–100) and the retorno brings the number back
// (decision 0033). Record type 2 (messages 2–5, descontos 2 and 3) is not written: a título has none of it.
export const INTER_400_HEADER = headerRemessa(
  "inter400Header",
  [B(27, 46)],
  [B(101, 110), N("nsa", 111, 117, { src: "arquivo.nsa" }), B(118, 394)],
);

export const INTER_400_DETALHE = defineRecord("inter400Detalhe", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  B(2, 20),
  N("carteira", 21, 23, { src: "beneficiario.carteira", default: "112" }),
  N("agencia", 24, 27, { src: "beneficiario.agencia" }),
  N("conta", 28, 37, { src: "beneficiario.contaComDv" }),
  A("controleParticipante", 38, 62, { src: "titulo.id", fmt: "raw" }),
  B(63, 65),
  N("multaCodigo", 66, 66, { src: "titulo.codigos400.multa" }),
  N("multaValor", 67, 79, { src: "titulo.codigos400.multaValor" }),
  N("multaPercentual", 80, 83, { src: "titulo.codigos400.multaPercentual" }),
  N("multaData", 84, 89, { src: "titulo.multa.data", fmt: "date6" }),
  // "Zeros (será preenchido pelo Inter no arquivo retorno)"
  K("nossoNumero", 90, 100, "00000000000", "N"),
  B(101, 108),
  N("ocorrencia", 109, 110, { src: "titulo.movimento" }),
  // numeric in the manual's table, yet Inter's own retornos echo letters left-aligned (decision 0033)
  A("seuNumero", 111, 120, { src: "titulo.numeroDocumento", fmt: "docnum" }),
  ...VENCIMENTO_E_VALOR,
  // days after the due date the boleto may still be paid: 0, 30 or 60
  K("dataLimitePagamento", 140, 141, "00", "N"),
  B(142, 147),
  K("especie", 148, 149, "99", "N"),
  K("identificacao", 150, 150, "N"),
  // "Branco (arquivo retorno informará sempre a data que o boleto foi registrado)"
  B(151, 156),
  B(157, 159),
  N("jurosCodigo", 160, 160, { src: "titulo.codigos400.juros" }),
  N("jurosValorDia", 161, 173, { src: "titulo.juros.valor", fmt: "cents" }),
  Z(174, 177),
  N("jurosData", 178, 183, { src: "titulo.juros.data", fmt: "date6" }),
  N("descontoCodigo", 184, 184, { src: "titulo.codigos400.desconto" }),
  N("descontoValor", 185, 197, { src: "titulo.desconto.valor", fmt: "cents" }),
  Z(198, 201),
  N("descontoData", 202, 207, { src: "titulo.desconto.data", fmt: "date6" }),
  N("abatimento", 208, 220, { src: "titulo.abatimentoCentavos", fmt: "cents" }),
  N("pagadorTipoInscricao", 221, 222, { src: "pagador.tipoInscricao400" }),
  N("pagadorDocumento", 223, 236, { src: "pagador.documento", fmt: "taxid" }),
  A("pagadorNome", 237, 276, { src: "pagador.nome", truncate: true }),
  A("pagadorEndereco", 277, 316, { src: "pagador.endereco", truncate: true }),
  N("cep", 317, 324, { src: "pagador.cep" }),
  A("mensagem1", 325, 394, { src: "titulo.mensagem1", truncate: true }),
  seq,
]);

/** Inter's trailer: the number of boletos in the file (2–7; the manual's "002 a 394 Branco" after it means 8–394). */
export const INTER_400_TRAILER = defineRecord("inter400Trailer", 400, [
  K("tipoRegistro", 1, 1, "9", "N"),
  N("quantidadeBoletos", 2, 7, { src: "totais.titulos" }),
  B(8, 394),
  seq,
]);

// ---------------------------------------------------------------- retorno

// The stretches the retorno details share, position for position and read the same way.
/** 2–17: the beneficiário's inscrição (type and CPF/CNPJ). */
const RETORNO_INSCRICAO = [
  N("tipoInscricao", 2, 3, { src: "beneficiario.tipoInscricao" }),
  N("documento", 4, 17, { src: "beneficiario.documento", fmt: "taxid" }),
];
/** 109–116: the ocorrência and its date. */
const RETORNO_OCORRENCIA = [
  A("ocorrencia", 109, 110, { src: "ocorrencia", fmt: "raw" }),
  N("dataOcorrencia", 111, 116, { src: "dataOcorrencia", fmt: "date6" }),
];
/** 147–165: the título's vencimento and valor. */
const RETORNO_VENCIMENTO_E_VALOR = [
  N("vencimento", 147, 152, { src: "vencimento", fmt: "date6" }),
  N("valor", 153, 165, { src: "valorCentavos", fmt: "cents" }),
];
/** 228–279: abatimento, desconto, valor pago and juros. */
const RETORNO_ABATIMENTO_A_JUROS = [
  N("abatimento", 228, 240, { src: "abatimentoCentavos", fmt: "cents" }),
  N("desconto", 241, 253, { src: "descontoCentavos", fmt: "cents" }),
  N("valorPago", 254, 266, { src: "valorPagoCentavos", fmt: "cents" }),
  N("juros", 267, 279, { src: "jurosCentavos", fmt: "cents" }),
];
// single fields at the same place in most details: tarifa 176–188, IOF 215–227, outros créditos 280–292,
// data de crédito 296–301
const retornoTarifa = N("tarifa", 176, 188, { src: "tarifaCentavos", fmt: "cents" });
const retornoIof = N("iof", 215, 227, { src: "iofCentavos", fmt: "cents" });
const retornoOutrosCreditos = N("outrosCreditos", 280, 292, { src: "outrosCreditosCentavos", fmt: "cents" });
const retornoDataCredito = N("dataCredito", 296, 301, { src: "dataCredito", fmt: "date6" });

const headerRetorno = defineRecord("header400Retorno", 400, [
  K("tipoRegistro", 1, 1, "0", "N"),
  A("operacao", 2, 2, { src: "operacao", fmt: "raw" }),
  A("literalRetorno", 3, 9, { src: "literal", fmt: "raw" }),
  A("servico", 10, 11, { fmt: "raw" }),
  A("literalServico", 12, 26, { fmt: "raw" }),
  A("empresa", 27, 46, { src: "empresa", fmt: "raw" }),
  A("nomeEmpresa", 47, 76, { src: "nomeEmpresa", fmt: "raw" }),
  A("banco", 77, 79, { src: "banco", fmt: "raw" }),
  A("nomeBanco", 80, 94, { src: "nomeBanco", fmt: "raw" }),
  A("dataGravacao", 95, 100, { src: "dataGravacao", fmt: "raw" }),
  A("resto", 101, 394, { fmt: "raw" }),
  seq,
]);
export const HEADER_400_RETORNO = headerRetorno;

export const BRADESCO_400_RETORNO = defineRecord("bradesco400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...RETORNO_INSCRICAO,
  Z(18, 20),
  N("zero", 21, 21),
  N("carteira", 22, 24, { src: "carteira" }),
  N("agencia", 25, 29, { src: "agencia" }),
  A("conta", 30, 37, { src: "conta", fmt: "raw" }),
  A("controleParticipante", 38, 62, { src: "id", fmt: "raw" }),
  Z(63, 70),
  A("nossoNumero", 71, 82, { src: "nossoNumero", fmt: "raw" }),
  A("usoBanco1", 83, 104, { fmt: "raw" }),
  A("rateio", 105, 105, { fmt: "raw" }),
  A("pagamentoParcial", 106, 107, { fmt: "raw" }),
  A("carteiraCodigo", 108, 108, { fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("numeroDocumento", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("nossoNumero2", 127, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  N("bancoCobrador", 166, 168, { src: "bancoRecebedor" }),
  N("agenciaCobradora", 169, 173, { src: "agenciaRecebedora" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  N("outrasDespesas", 189, 201, { src: "outrasDespesasCentavos", fmt: "cents" }),
  N("jurosOperacao", 202, 214, { fmt: "cents" }),
  retornoIof,
  ...RETORNO_ABATIMENTO_A_JUROS,
  retornoOutrosCreditos,
  A("brancos293", 293, 294, { fmt: "raw" }),
  A("motivoCodigo", 295, 295, { fmt: "raw" }),
  retornoDataCredito,
  A("origemPagamento", 302, 304, { fmt: "raw" }),
  A("brancos305", 305, 318, { fmt: "raw" }),
  A("motivos", 319, 328, { src: "motivosRaw", fmt: "raw" }),
  A("resto", 329, 394, { fmt: "raw" }),
  seq,
]);

export const ITAU_400_RETORNO = defineRecord("itau400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...RETORNO_INSCRICAO,
  N("agencia", 18, 21, { src: "agencia" }),
  A("zeros22", 22, 23, { fmt: "raw" }),
  A("conta", 24, 29, { src: "conta", fmt: "raw" }),
  A("brancos30", 30, 37, { fmt: "raw" }),
  A("usoEmpresa", 38, 62, { src: "id", fmt: "raw" }),
  A("nossoNumero", 63, 70, { src: "nossoNumeroSequencial", fmt: "raw" }),
  A("brancos71", 71, 82, { fmt: "raw" }),
  A("carteira", 83, 85, { src: "carteira", fmt: "raw" }),
  A("nossoNumeroComDac", 86, 94, { src: "nossoNumero", fmt: "raw" }),
  A("brancos95", 95, 107, { fmt: "raw" }),
  A("codigoCarteira", 108, 108, { fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("numeroDocumento", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("nossoNumero3", 127, 134, { fmt: "raw" }),
  A("brancos135", 135, 136, { fmt: "raw" }),
  A("motivosSantander", 137, 146, { src: "motivosSantanderRaw", fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  N("bancoCobrador", 166, 168, { src: "bancoRecebedor" }),
  A("agenciaCobradora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  A("brancos189", 189, 214, { fmt: "raw" }),
  retornoIof,
  ...RETORNO_ABATIMENTO_A_JUROS,
  retornoOutrosCreditos,
  A("dda", 293, 295, { fmt: "raw" }),
  retornoDataCredito,
  A("resto302", 302, 377, { fmt: "raw" }),
  A("erros", 378, 385, { src: "motivosRaw", fmt: "raw" }),
  A("brancos386", 386, 392, { fmt: "raw" }),
  A("codigoLiquidacao", 393, 394, { src: "codigoLiquidacao", fmt: "raw" }),
  seq,
]);

/** Santander CNAB 400 retorno: Itaú-like positions, but the nosso número is at 63–70 (no DAC at 86–94). */
export const SANTANDER_400_RETORNO = overrideRecord(ITAU_400_RETORNO, "santander400Retorno", [
  A("nossoNumero", 63, 70, { src: "nossoNumero", fmt: "raw" }),
  A("nossoNumeroBanco", 86, 94, { fmt: "raw" }),
]);

/** Santander CNAB 400 retorno PIX record (type 2): chave type, chave DICT, txid. */
export const SANTANDER_400_PIX = defineRecord("santander400Pix", 400, [
  K("tipoRegistro", 1, 1, "2", "N"),
  A("tipoChave", 2, 2, { src: "pix.tipoChave", fmt: "raw" }),
  A("chave", 3, 79, { src: "pix.chave", fmt: "raw" }),
  A("txid", 80, 114, { src: "pix.txid", fmt: "raw" }),
  A("resto", 115, 394, { fmt: "raw" }),
  seq,
]);

/** Itaú CNAB 400 retorno PIX record (type 3): the full EMV BR Code at 2–391, PIX error at 392–394 (cobranca.md §5.2). */
export const ITAU_400_PIX = defineRecord("itau400Pix", 400, [
  K("tipoRegistro", 1, 1, "3", "N"),
  A("emv", 2, 391, { src: "pix.emv", fmt: "raw" }),
  A("erro", 392, 394, { src: "pix.erro", fmt: "raw" }),
  seq,
]);

/** Bradesco CNAB 400 retorno PIX record (type 4): location URL 29–105, txid 106–140 (cobranca.md §5.2). */
export const BRADESCO_400_PIX = defineRecord("bradesco400Pix", 400, [
  K("tipoRegistro", 1, 1, "4", "N"),
  A("uso2", 2, 28, { fmt: "raw" }),
  A("url", 29, 105, { src: "pix.url", fmt: "raw" }),
  A("txid", 106, 140, { src: "pix.txid", fmt: "raw" }),
  A("resto", 141, 394, { fmt: "raw" }),
  seq,
]);

/** Banco do Brasil CBR643 detail (type 7, convênio of 7 digits). */
export const BB_CBR643_RETORNO = defineRecord("bbCbr643Retorno", 400, [
  K("tipoRegistro", 1, 1, "7", "N"),
  ...RETORNO_INSCRICAO,
  A("agencia", 18, 22, { src: "agencia", fmt: "raw" }),
  A("conta", 23, 31, { src: "conta", fmt: "raw" }),
  A("convenio", 32, 38, { src: "convenio", fmt: "raw" }),
  A("controleParticipante", 39, 63, { src: "id", fmt: "raw" }),
  A("nossoNumero", 64, 80, { src: "nossoNumero", fmt: "raw" }),
  A("tipoCobranca", 81, 106, { fmt: "raw" }),
  A("carteira", 107, 108, { src: "carteira", fmt: "raw" }),
  A("comando", 109, 110, { src: "ocorrencia", fmt: "raw" }),
  N("dataLiquidacao", 111, 116, { src: "dataOcorrencia", fmt: "date6" }),
  A("numeroDocumento", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("brancos127", 127, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  N("bancoRecebedor", 166, 168, { src: "bancoRecebedor" }),
  A("agenciaRecebedora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  N("dataCredito", 176, 181, { src: "dataCredito", fmt: "date6" }),
  N("tarifa", 182, 188, { src: "tarifaCentavos", fmt: "cents" }),
  N("outrasDespesas", 189, 201, { src: "outrasDespesasCentavos", fmt: "cents" }),
  N("jurosDesconto", 202, 214, { fmt: "cents" }),
  N("iofDesconto", 215, 227, { src: "iofCentavos", fmt: "cents" }),
  N("abatimento", 228, 240, { src: "abatimentoCentavos", fmt: "cents" }),
  N("desconto", 241, 253, { src: "descontoCentavos", fmt: "cents" }),
  N("valorRecebido", 254, 266, { src: "valorPagoCentavos", fmt: "cents" }),
  N("jurosMora", 267, 279, { src: "jurosCentavos", fmt: "cents" }),
  N("outrosRecebimentos", 280, 292, { src: "outrosCreditosCentavos", fmt: "cents" }),
  A("resto", 293, 394, { fmt: "raw" }),
  seq,
]);

export const TRAILER_400_RETORNO = defineRecord("trailer400Retorno", 400, [
  K("tipoRegistro", 1, 1, "9", "N"),
  A("resto", 2, 394, { fmt: "raw" }),
  seq,
]);

/** Unicred CNAB 400 retorno detail ("Cobrança Beneficiário Web – Layout de Retorno de Boletos"). */
export const UNICRED_400_RETORNO = defineRecord("unicred400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...RETORNO_INSCRICAO,
  A("agencia", 18, 21, { src: "agencia", fmt: "raw" }),
  A("agenciaDv", 22, 22, { fmt: "raw" }),
  A("conta", 23, 30, { src: "conta", fmt: "raw" }),
  A("contaDv", 31, 31, { fmt: "raw" }),
  A("codigoBeneficiario", 32, 45, { src: "convenio", fmt: "raw" }),
  A("nossoNumero", 46, 62, { src: "nossoNumero", fmt: "raw" }),
  A("reservado63", 63, 73, { fmt: "raw" }),
  A("fixo74", 74, 75, { fmt: "raw" }),
  A("reservado76", 76, 85, { fmt: "raw" }),
  A("fixo86", 86, 108, { fmt: "raw" }),
  A("ocorrencia", 109, 110, { src: "ocorrencia", fmt: "raw" }),
  N("dataLiquidacao", 111, 116, { src: "dataOcorrencia", fmt: "date6" }),
  A("reservado117", 117, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("bancoRecebedor", 166, 168, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaRecebedora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("reservado174", 174, 175, { fmt: "raw" }),
  N("dataRepasse", 176, 181, { src: "dataCredito", fmt: "date6" }),
  N("tarifa", 182, 188, { src: "tarifaCentavos", fmt: "cents" }),
  A("reservado189", 189, 227, { fmt: "raw" }),
  ...RETORNO_ABATIMENTO_A_JUROS,
  A("seuNumero", 280, 305, { src: "numeroDocumento", fmt: "raw" }),
  N("valorLiquido", 306, 318, { src: "valorLiquidoCentavos", fmt: "cents" }),
  A("complemento", 319, 326, { src: "motivosRaw", fmt: "raw" }),
  A("instrucaoOrigem", 327, 328, { src: "instrucaoOrigem", fmt: "raw" }),
  A("reservado329", 329, 394, { fmt: "raw" }),
  seq,
]);

/** Banco do Nordeste CNAB 400 retorno detail (manual §7.2); 280–394 is a table of error flags (nota 7). */
export const BNB_400_RETORNO = defineRecord("bnb400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...RETORNO_INSCRICAO,
  A("agencia", 18, 21, { src: "agencia", fmt: "raw" }),
  A("zeros22", 22, 23, { fmt: "raw" }),
  A("conta", 24, 31, { src: "conta", fmt: "raw" }),
  A("brancos32", 32, 37, { fmt: "raw" }),
  A("controleParticipante", 38, 62, { src: "id", fmt: "raw" }),
  A("nossoNumero", 63, 70, { src: "nossoNumero", fmt: "raw" }),
  A("contrato", 71, 80, { fmt: "raw" }),
  A("brancos81", 81, 107, { fmt: "raw" }),
  A("carteira", 108, 108, { src: "carteira", fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("seuNumero", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("confirmacaoNossoNumero", 127, 134, { fmt: "raw" }),
  A("brancos135", 135, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("bancoRecebedor", 166, 168, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaRecebedora", 169, 172, { src: "agenciaRecebedora", fmt: "raw" }),
  A("brancos173", 173, 173, { fmt: "raw" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  N("outrasDespesas", 189, 201, { src: "outrasDespesasCentavos", fmt: "cents" }),
  N("jurosOperacao", 202, 214, { fmt: "cents" }),
  N("ioc", 215, 227, { src: "iofCentavos", fmt: "cents" }),
  N("abatimento", 228, 240, { src: "abatimentoCentavos", fmt: "cents" }),
  N("desconto", 241, 253, { src: "descontoCentavos", fmt: "cents" }),
  N("valorRecebido", 254, 266, { src: "valorPagoCentavos", fmt: "cents" }),
  N("jurosMora", 267, 279, { src: "jurosCentavos", fmt: "cents" }),
  A("tabelaErros", 280, 394, { src: "tabelaErrosRaw", fmt: "raw" }),
  seq,
]);

/** Banco Safra CNAB 400 retorno detail (manual §6.2); the rejection reason is one 3-digit code at 105–107. */
export const SAFRA_400_RETORNO = defineRecord("safra400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  ...RETORNO_INSCRICAO,
  A("codigoEmpresa", 18, 31, { src: "conta", fmt: "raw" }),
  A("brancos32", 32, 37, { fmt: "raw" }),
  A("usoEmpresa", 38, 62, { src: "id", fmt: "raw" }),
  A("nossoNumero", 63, 71, { src: "nossoNumero", fmt: "raw" }),
  A("brancos72", 72, 102, { fmt: "raw" }),
  A("ocorrenciaOrigem", 103, 104, { src: "ocorrenciaOrigem", fmt: "raw" }),
  A("motivoRejeicao", 105, 107, { src: "motivoRaw3", fmt: "raw" }),
  A("carteira", 108, 108, { src: "carteira", fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("seuNumero", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("nossoNumeroConfirmacao", 127, 135, { fmt: "raw" }),
  A("brancos136", 136, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("bancoCobrador", 166, 168, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  N("outrasDespesas", 189, 201, { src: "outrasDespesasCentavos", fmt: "cents" }),
  A("zeros202", 202, 214, { fmt: "raw" }),
  retornoIof,
  ...RETORNO_ABATIMENTO_A_JUROS,
  retornoOutrosCreditos,
  A("moeda", 293, 295, { fmt: "raw" }),
  retornoDataCredito,
  A("resto302", 302, 391, { fmt: "raw" }),
  A("numeroArquivo", 392, 394, { fmt: "raw" }),
  seq,
]);

/**
 * Banco Inter CNAB 400 retorno detail (Manual CNAB400 Inter v1.1 §5.2). The nosso número at 71–81 is the one
 * Inter assigned, with its DV (decision 0023); 241–380 is the rejection's text, not a table of codes.
 */
export const INTER_400_RETORNO = defineRecord("inter400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  A("tipoInscricao", 2, 3, { fmt: "raw" }),
  A("documento", 4, 17, { fmt: "raw" }),
  A("zeros18", 18, 20, { fmt: "raw" }),
  A("carteiraEmpresa", 21, 23, { fmt: "raw" }),
  A("agencia", 24, 27, { src: "agencia", fmt: "raw" }),
  A("conta", 28, 37, { src: "conta", fmt: "raw" }),
  A("controleParticipante", 38, 62, { src: "id", fmt: "raw" }),
  A("zeros63", 63, 70, { fmt: "raw" }),
  A("nossoNumero", 71, 81, { src: "nossoNumero", fmt: "raw" }),
  A("brancos82", 82, 86, { fmt: "raw" }),
  A("carteira", 87, 89, { src: "carteira", fmt: "raw" }),
  A("ocorrencia", 90, 91, { src: "ocorrencia", fmt: "raw" }),
  N("dataOcorrencia", 92, 97, { src: "dataOcorrencia", fmt: "date6" }),
  A("seuNumero", 98, 107, { src: "numeroDocumento", fmt: "raw" }),
  A("nossoNumeroBanco", 108, 118, { fmt: "raw" }),
  N("vencimento", 119, 124, { src: "vencimento", fmt: "date6" }),
  N("valor", 125, 137, { src: "valorCentavos", fmt: "cents" }),
  A("bancoCobrador", 138, 140, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 141, 144, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 145, 146, { src: "especie", fmt: "raw" }),
  A("brancos147", 147, 159, { fmt: "raw" }),
  N("valorPago", 160, 172, { src: "valorPagoCentavos", fmt: "cents" }),
  N("dataCredito", 173, 178, { src: "dataCredito", fmt: "date6" }),
  A("brancos179", 179, 181, { fmt: "raw" }),
  A("pagadorNome", 182, 221, { fmt: "raw" }),
  A("brancos222", 222, 226, { fmt: "raw" }),
  A("pagadorDocumento", 227, 240, { fmt: "raw" }),
  A("motivoTexto", 241, 380, { src: "motivoTexto", fmt: "raw" }),
  A("brancos381", 381, 394, { fmt: "raw" }),
  seq,
]);

/** BRB's retorno header ("Leiaute Retorno" of its manual v077): the file date has four-digit years (95–102). */
export const BRB_400_HEADER_RETORNO = overrideRecord(headerRetorno, "brb400HeaderRetorno", [
  A("dataGravacao", 95, 102, { src: "dataGravacao", fmt: "raw" }),
  A("resto", 103, 379, { fmt: "raw" }),
  A("dataMovimento", 380, 387, { fmt: "raw" }),
  A("brancos388", 388, 394, { fmt: "raw" }),
]);

/**
 * BRB retorno detail (manual v077, "Leiaute Retorno"): its own 400 positions, dates DDMMAAAA. The nosso número
 * is MSSSSSS070dd (71–82) with the incremento apart (25–27); 365–394 is a 3-digit rejection code and its text.
 */
export const BRB_400_RETORNO = defineRecord("brb400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  A("tipoInscricao", 2, 3, { fmt: "raw" }),
  A("pagadorDocumento", 4, 17, { fmt: "raw" }),
  A("brancos18", 18, 20, { fmt: "raw" }),
  A("zeros21", 21, 24, { fmt: "raw" }),
  A("incremento", 25, 27, { fmt: "raw" }),
  A("conta", 28, 37, { src: "conta", fmt: "raw" }),
  A("brancos38", 38, 45, { fmt: "raw" }),
  A("controleParticipante", 46, 70, { src: "id", fmt: "raw" }),
  A("nossoNumero", 71, 82, { src: "nossoNumero", fmt: "raw" }),
  A("contaCentralizadora", 83, 92, { fmt: "raw" }),
  A("seuNumero", 93, 105, { src: "numeroDocumento", fmt: "raw" }),
  A("brancos106", 106, 107, { fmt: "raw" }),
  A("pagadorDda", 108, 108, { src: "pagadorDda", fmt: "raw" }),
  A("ocorrencia", 109, 110, { src: "ocorrencia", fmt: "raw" }),
  N("dataOcorrencia", 111, 118, { src: "dataOcorrencia", fmt: "date8" }),
  N("dataCredito", 119, 126, { src: "dataCredito", fmt: "date8" }),
  A("tipoBaixa", 127, 128, { fmt: "raw" }),
  A("nossoNumeroConfirmacao", 129, 140, { fmt: "raw" }),
  A("codigoRateio", 141, 144, { fmt: "raw" }),
  A("brancos145", 145, 148, { fmt: "raw" }),
  N("vencimento", 149, 156, { src: "vencimento", fmt: "date8" }),
  N("valor", 157, 169, { src: "valorCentavos", fmt: "cents" }),
  A("bancoCobrador", 170, 172, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 173, 177, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 178, 179, { src: "especie", fmt: "raw" }),
  A("zeros180", 180, 218, { fmt: "raw" }),
  N("iof", 219, 231, { src: "iofCentavos", fmt: "cents" }),
  A("zeros232", 232, 244, { fmt: "raw" }),
  N("desconto", 245, 257, { src: "descontoCentavos", fmt: "cents" }),
  N("valorPago", 258, 270, { src: "valorPagoCentavos", fmt: "cents" }),
  N("outrosDebitos", 271, 283, { src: "outrosDebitosCentavos", fmt: "cents" }),
  N("outrosCreditos", 284, 296, { src: "outrosCreditosCentavos", fmt: "cents" }),
  A("brancos297", 297, 299, { fmt: "raw" }),
  N("dataPagamento", 300, 307, { src: "dataPagamento", fmt: "date8" }),
  A("usoBrb", 308, 364, { fmt: "raw" }),
  A("motivoRejeicao", 365, 367, { src: "motivoRaw3", fmt: "raw" }),
  A("motivoTexto", 368, 394, { src: "motivoDescricao", fmt: "raw" }),
  seq,
]);

/**
 * Banco C6 CNAB 400 retorno detail, at the positions of the reference file (laravel-boleto's c6.ret, which
 * its author built from C6's manual v2.7; no C6 manual was readable here: cobranca.md §3.16). The nosso
 * número is the one C6 assigned: 0 + 10 digits (63–73) and its DV (74), as the boleto's `completo`.
 */
export const C6_400_RETORNO = defineRecord("c6400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  A("tipoInscricao", 2, 3, { fmt: "raw" }),
  A("documento", 4, 17, { fmt: "raw" }),
  A("codigoEmpresa", 18, 29, { src: "convenio", fmt: "raw" }),
  A("brancos30", 30, 37, { fmt: "raw" }),
  A("controleParticipante", 38, 62, { src: "id", fmt: "raw" }),
  A("nossoNumero", 63, 73, { src: "nossoNumero", fmt: "raw" }),
  A("nossoNumeroDv", 74, 74, { src: "nossoNumeroDv", fmt: "raw" }),
  A("usoBanco75", 75, 106, { fmt: "raw" }),
  A("carteira", 107, 108, { src: "carteira", fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("seuNumero", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("brancos127", 127, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("bancoCobrador", 166, 168, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("brancos174", 174, 175, { fmt: "raw" }),
  retornoTarifa,
  A("brancos189", 189, 227, { fmt: "raw" }),
  ...RETORNO_ABATIMENTO_A_JUROS,
  retornoOutrosCreditos,
  A("brancos293", 293, 295, { fmt: "raw" }),
  retornoDataCredito,
  A("resto302", 302, 394, { fmt: "raw" }),
  seq,
]);

/** Caixa's retorno header (SIGCB CNAB 400 manual v015 §3.6.7): the file's sequence number (NSA) at 390–394. */
export const CAIXA_400_HEADER_RETORNO = overrideRecord(headerRetorno, "caixa400HeaderRetorno", [
  A("resto", 101, 389, { fmt: "raw" }),
  N("nsa", 390, 394, { src: "nsa" }),
]);

/**
 * Caixa CNAB 400 retorno detail (SIGCB manual v015 §3.6.8). The nosso número is the SIGCB one, modalidade
 * (57–58) and number (59–73) read as one, without its DV, as the CNAB 240 retorno gives it. The código do
 * beneficiário (21–27) has six or seven digits with a blank beside (NE004): read trimmed. A rejection (99)
 * carries its motivo at 80–82.
 */
export const CAIXA_400_RETORNO = defineRecord("caixa400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  A("tipoInscricao", 2, 3, { fmt: "raw" }),
  A("documento", 4, 17, { fmt: "raw" }),
  A("usoCaixa18", 18, 20, { fmt: "raw" }),
  A("codigoBeneficiario", 21, 27, { src: "convenio", fmt: "raw", align: "right" }),
  A("idEmissao", 28, 28, { fmt: "raw" }),
  A("idPostagem", 29, 29, { fmt: "raw" }),
  A("brancos30", 30, 31, { fmt: "raw" }),
  A("usoEmpresa", 32, 56, { src: "id", fmt: "raw" }),
  A("nossoNumero", 57, 73, { src: "nossoNumero", fmt: "raw" }),
  A("brancos74", 74, 79, { fmt: "raw" }),
  A("motivoRejeicao", 80, 82, { src: "motivoRaw3", fmt: "raw" }),
  A("usoCaixa83", 83, 106, { fmt: "raw" }),
  A("carteira", 107, 108, { src: "carteira", fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("numeroDocumento", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("brancos127", 127, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("bancoCobrador", 166, 168, { src: "bancoRecebedor", fmt: "raw" }),
  A("agenciaCobradora", 169, 173, { src: "agenciaRecebedora", fmt: "raw" }),
  A("especie", 174, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  A("canalLiquidacao", 189, 191, { src: "codigoLiquidacao", fmt: "raw" }),
  A("formaPagamento", 192, 192, { fmt: "raw" }),
  A("floatNegociado", 193, 194, { fmt: "raw" }),
  A("dataDebitoTarifa", 195, 200, { fmt: "raw" }),
  A("brancos201", 201, 214, { fmt: "raw" }),
  retornoIof,
  ...RETORNO_ABATIMENTO_A_JUROS,
  N("multa", 280, 292, { src: "multaCentavos", fmt: "cents" }),
  A("moeda", 293, 293, { fmt: "raw" }),
  N("dataCredito", 294, 299, { src: "dataCredito", fmt: "date6" }),
  A("brancos300", 300, 394, { fmt: "raw" }),
  seq,
]);

/**
 * Sicredi's retorno header (Manual CNAB 400 Sicredi, August 2019, §10.1): the file date is AAAAMMDD (95–102),
 * the retorno's number at 111–117.
 */
export const SICREDI_400_HEADER_RETORNO = overrideRecord(headerRetorno, "sicredi400HeaderRetorno", [
  N("dataGravacao", 95, 102, { src: "dataGravacao", fmt: "dateYmd8" }),
  A("brancos103", 103, 110, { fmt: "raw" }),
  N("numeroRetorno", 111, 117, { src: "nsa" }),
  A("resto", 118, 389, { fmt: "raw" }),
  A("versaoSistema", 390, 394, { fmt: "raw" }),
]);

/**
 * Sicredi CNAB 400 retorno detail, cobrança com registro (Manual CNAB 400 Sicredi, August 2019, §10.2). The
 * nosso número (48–62, "sem edição") is the boleto's nine digits AABXXXXXD in a field of fifteen; motivos are
 * pairs at 319–328 (§6.3); the credit date (329–336, "data prevista para lançamento") is AAAAMMDD.
 */
export const SICREDI_400_RETORNO = defineRecord("sicredi400Retorno", 400, [
  K("tipoRegistro", 1, 1, "1", "N"),
  A("brancos2", 2, 13, { fmt: "raw" }),
  A("tipoCobranca", 14, 14, { fmt: "raw" }),
  A("codigoPagadorCooperativa", 15, 19, { fmt: "raw" }),
  A("codigoPagadorAssociado", 20, 24, { fmt: "raw" }),
  A("boletoDda", 25, 25, { fmt: "raw" }),
  A("brancos26", 26, 47, { fmt: "raw" }),
  A("nossoNumero", 48, 62, { src: "nossoNumero", fmt: "raw", align: "right" }),
  A("brancos63", 63, 108, { fmt: "raw" }),
  ...RETORNO_OCORRENCIA,
  A("seuNumero", 117, 126, { src: "numeroDocumento", fmt: "raw" }),
  A("localLiquidacao", 127, 146, { fmt: "raw" }),
  ...RETORNO_VENCIMENTO_E_VALOR,
  A("brancos166", 166, 174, { fmt: "raw" }),
  A("especie", 175, 175, { src: "especie", fmt: "raw" }),
  retornoTarifa,
  N("custasProtesto", 189, 201, { src: "outrasDespesasCentavos", fmt: "cents" }),
  A("zeros202", 202, 227, { fmt: "raw" }),
  ...RETORNO_ABATIMENTO_A_JUROS,
  N("multa", 280, 292, { src: "multaCentavos", fmt: "cents" }),
  A("brancos293", 293, 294, { fmt: "raw" }),
  A("aceiteProtesto", 295, 295, { fmt: "raw" }),
  A("brancos296", 296, 318, { fmt: "raw" }),
  A("motivos", 319, 328, { src: "motivosRaw", fmt: "raw" }),
  N("dataCredito", 329, 336, { src: "dataCredito", fmt: "dateYmd8" }),
  A("brancos337", 337, 394, { fmt: "raw" }),
  seq,
]);
