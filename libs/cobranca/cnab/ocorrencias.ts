/**
 * Retorno movement codes → canonical states, per (bank, layout), as explicit tables (cobranca.md §5).
 * A code missing from a table is UNKNOWN — never PAID.
 */
export const ESTADOS = [
  "REGISTERED",
  "REJECTED",
  "PAID",
  "PARTIALLY_PAID",
  "WRITTEN_OFF",
  "PROTESTED",
  "CHANGED",
  "FEE",
  "UNKNOWN",
] as const;
export type EstadoCanonico = (typeof ESTADOS)[number];

export interface Ocorrencia {
  readonly estado: EstadoCanonico;
  readonly descricao: string;
}

type Tabela = Readonly<Record<string, Ocorrencia>>;
const o = (estado: EstadoCanonico, descricao: string): Ocorrencia => ({ estado, descricao });

/** FEBRABAN C044 (CEF-240), the base of every CNAB 240 retorno. */
const FEBRABAN_240: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "04": o("CHANGED", "transferência de carteira/entrada"),
  "05": o("WRITTEN_OFF", "transferência de carteira/baixa"),
  "06": o("PAID", "liquidação"),
  "07": o("CHANGED", "confirmação do recebimento da instrução de desconto"),
  "08": o("CHANGED", "confirmação do recebimento do cancelamento do desconto"),
  "09": o("WRITTEN_OFF", "baixa"),
  "11": o("UNKNOWN", "títulos em carteira (em ser)"),
  "12": o("CHANGED", "confirmação recebimento instrução de abatimento"),
  "13": o("CHANGED", "confirmação recebimento instrução de cancelamento abatimento"),
  "14": o("CHANGED", "confirmação recebimento instrução alteração de vencimento"),
  "17": o("PAID", "liquidação após baixa ou liquidação título não registrado"),
  "19": o("CHANGED", "confirmação recebimento instrução de protesto"),
  "20": o("CHANGED", "confirmação recebimento instrução de sustação/cancelamento de protesto"),
  "23": o("CHANGED", "remessa a cartório (aponte em cartório)"),
  "24": o("CHANGED", "retirada de cartório e manutenção em carteira"),
  "25": o("PROTESTED", "protestado e baixado (baixa por ter sido protestado)"),
  "26": o("REJECTED", "instrução rejeitada"),
  "27": o("CHANGED", "confirmação do pedido de alteração de outros dados"),
  "28": o("FEE", "débito de tarifas/custas"),
  "30": o("REJECTED", "alteração de dados rejeitada"),
  "44": o("UNKNOWN", "estorno de baixa/liquidação"),
  "45": o("CHANGED", "alteração de dados"),
  "61": o("CHANGED", "confirmação de alteração do valor nominal do título"),
  "62": o("CHANGED", "confirmação de alteração do valor/percentual mínimo/máximo"),
};

const CAIXA_240: Tabela = {
  ...FEBRABAN_240,
  "39": o("REJECTED", "alteração rejeitada"),
  "40": o("REJECTED", "alteração rejeitada"),
  "41": o("REJECTED", "alteração rejeitada"),
  "46": o("PAID", "liquidação on-line"),
  "47": o("UNKNOWN", "estorno de liquidação on-line"),
};

const BRADESCO_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "06": o("PAID", "liquidação normal"),
  "09": o("WRITTEN_OFF", "baixado automaticamente via arquivo"),
  "10": o("WRITTEN_OFF", "baixado conforme instruções da agência"),
  "11": o("UNKNOWN", "em ser (arquivo de títulos pendentes)"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "vencimento alterado"),
  "15": o("PAID", "liquidação em cartório"),
  "17": o("PAID", "liquidação após baixa ou título não registrado"),
  "18": o("CHANGED", "acerto de depositária"),
  "19": o("CHANGED", "confirmação recebimento instrução de protesto"),
  "20": o("CHANGED", "confirmação recebimento instrução sustação de protesto"),
  "21": o("CHANGED", "acerto do controle do participante"),
  "23": o("PROTESTED", "entrada do título em cartório"),
  "24": o("REJECTED", "entrada rejeitada por CEP irregular"),
  "27": o("REJECTED", "baixa rejeitada"),
  "28": o("FEE", "débito de tarifas/custas"),
  "30": o("REJECTED", "alteração de outros dados rejeitados"),
  "32": o("REJECTED", "instrução rejeitada"),
  "33": o("CHANGED", "confirmação pedido alteração outros dados"),
  "35": o("CHANGED", "desagendamento do débito automático"),
};

const ITAU_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "04": o("CHANGED", "alteração de dados - nova entrada ou alteração/exclusão de dados acatada"),
  "05": o("WRITTEN_OFF", "alteração de dados - baixa"),
  "06": o("PAID", "liquidação normal"),
  "07": o("PARTIALLY_PAID", "liquidação parcial - cobrança inteligente"),
  "08": o("PAID", "liquidação em cartório"),
  "09": o("WRITTEN_OFF", "baixa simples"),
  // Itaú sends 06 and then 10 for the same payment: 10 is the baixa, the payment is the 06 event.
  "10": o("WRITTEN_OFF", "baixa por ter sido liquidado"),
  "11": o("UNKNOWN", "em ser"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "vencimento alterado"),
  "15": o("REJECTED", "baixas rejeitadas"),
  "16": o("REJECTED", "instruções rejeitadas"),
  "17": o("REJECTED", "alteração/exclusão de dados rejeitados"),
  "18": o("REJECTED", "cobrança contratual - instruções/alterações rejeitadas/pendentes"),
  "19": o("CHANGED", "confirma recebimento de instrução de protesto"),
  "20": o("CHANGED", "confirma recebimento de instrução de sustação de protesto"),
  "23": o("CHANGED", "título enviado a cartório/tarifa"),
  "25": o("UNKNOWN", "alegações do pagador"),
  "28": o("FEE", "débito de tarifas/custas"),
  "32": o("PROTESTED", "baixa por ter sido protestado"),
  "47": o("WRITTEN_OFF", "baixa com transferência para desconto"),
  "59": o("PAID", "baixa por crédito em c/c através do SISPAG"),
  "60": o("REJECTED", "entrada rejeitada carnê"),
  "64": o("REGISTERED", "entrada confirmada com rateio de crédito"),
  "71": o("REGISTERED", "entrada registrada, aguardando avaliação (PIX)"),
  "72": o("WRITTEN_OFF", "baixa por crédito em c/c através do SISPAG sem título correspondente"),
  "73": o("REGISTERED", "confirmação de entrada na cobrança simples - entrada não aceita na cobrança contratual"),
};

const SANTANDER_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "06": o("PAID", "liquidação normal"),
  "07": o("PAID", "liquidação por conta"),
  "08": o("PAID", "liquidação por saldo"),
  "09": o("WRITTEN_OFF", "baixa automática"),
  "10": o("PROTESTED", "título baixado conforme instrução ou por protesto"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "prorrogação de vencimento"),
  "16": o("PAID", "título já baixado/liquidado"),
  "17": o("PAID", "liquidado em cartório"),
  "21": o("CHANGED", "entrada em cartório"),
  "22": o("CHANGED", "retirado de cartório"),
  "24": o("FEE", "custas de cartório"),
  "25": o("PROTESTED", "protestar título"),
  "26": o("CHANGED", "sustar protesto"),
};

const BB_CBR643: Tabela = {
  "02": o("REGISTERED", "confirmação de entrada de título"),
  "03": o("REJECTED", "comando recusado"),
  "05": o("PAID", "liquidado sem registro"),
  "06": o("PAID", "liquidação normal"),
  "07": o("PARTIALLY_PAID", "liquidação por conta/parcial"),
  "08": o("PAID", "liquidação por saldo"),
  "09": o("WRITTEN_OFF", "baixa de título"),
  "10": o("WRITTEN_OFF", "baixa solicitada"),
  "11": o("UNKNOWN", "títulos em ser"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "alteração de vencimento do título"),
  "15": o("PAID", "liquidação em cartório"),
  "16": o("CHANGED", "confirmação de alteração de juros de mora"),
  "19": o("CHANGED", "confirmação de recebimento de instruções para protesto"),
  "20": o("CHANGED", "débito em conta"),
  "21": o("CHANGED", "alteração do nome do sacado"),
  "22": o("CHANGED", "alteração do endereço do sacado"),
  "23": o("CHANGED", "indicação de encaminhamento a cartório"),
  "24": o("CHANGED", "sustar protesto"),
  "25": o("WRITTEN_OFF", "dispensar juros de mora"),
  "28": o("FEE", "manutenção de título vencido"),
  "96": o("FEE", "despesas de protesto"),
  "97": o("FEE", "despesas de sustação de protesto"),
  "98": o("FEE", "débito de custas antecipadas"),
};

const pick = (t: Tabela, codigos: readonly string[]): Tabela => Object.fromEntries(codigos.map((c) => [c, t[c]!]));

/** Ailos C044 (Manual CNAB 240 v07): the FEBRABAN codes it keeps plus its own (SMS, Serasa, cooperativa emite). */
const AILOS_240: Tabela = {
  ...pick(FEBRABAN_240, ["02", "03", "06", "07", "08", "09", "12", "13", "14", "17", "19", "20", "23", "24", "25", "26", "27", "28"]),
  "22": o("CHANGED", "título enviado ao cartório"),
  "36": o("CHANGED", "confirmação de envio de SMS"),
  "37": o("REJECTED", "envio de SMS rejeitado"),
  "42": o("CHANGED", "confirmação da alteração dos dados do sacado"),
  "46": o("CHANGED", "instrução para cancelar protesto confirmada"),
  "64": o("CHANGED", "cancelamento de SMS"),
  "76": o("PAID", "liquidação de boleto cooperativa emite e expede"),
  "77": o("PAID", "liquidação de boleto após baixa ou não registrado cooperativa emite e expede"),
  "89": o("REJECTED", "rejeição cartorária"),
  "91": o("UNKNOWN", "título em aberto não enviado ao pagador"),
  "92": o("REJECTED", "inconsistência negativação Serasa"),
  "93": o("CHANGED", "inclusão negativação via Serasa"),
  "94": o("CHANGED", "exclusão negativação Serasa"),
  "98": o("CHANGED", "excluir protesto com carta de anuência"),
};

/** Unicred CNAB 400 retorno "códigos de movimento"; 02 confirms an instruction, the entrada when its origem (327–328) is 01. */
const UNICRED_400: Tabela = {
  "01": o("PAID", "pago (título protestado pago em cartório)"),
  "02": o("REGISTERED", "instrução confirmada"),
  "03": o("REJECTED", "instrução rejeitada"),
  "04": o("CHANGED", "sustado judicial"),
  "06": o("PAID", "liquidação normal"),
  "07": o("PAID", "liquidação em condicional (em cartório, com cheque do próprio devedor)"),
  "08": o("CHANGED", "sustado definitivo"),
  "09": o("PAID", "liquidação de título descontado"),
  "10": o("CHANGED", "protesto solicitado"),
  "11": o("CHANGED", "protesto em cartório"),
  "12": o("CHANGED", "sustação solicitada"),
};

/** Banco do Nordeste CNAB 400 retorno (manual nota 4). */
const BNB_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "04": o("CHANGED", "alteração"),
  "06": o("PAID", "liquidação normal"),
  "07": o("PAID", "pagamento por conta"),
  "08": o("PAID", "pagamento por cartório"),
  "09": o("WRITTEN_OFF", "baixa simples"),
  "10": o("PROTESTED", "devolvido / protestado"),
  "11": o("UNKNOWN", "em ser"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "vencimento alterado"),
  "15": o("WRITTEN_OFF", "baixa automática"),
  "18": o("CHANGED", "alteração depositária"),
  "19": o("CHANGED", "confirmação de protesto"),
  "20": o("CHANGED", "confirmação de sustar protesto"),
  "21": o("CHANGED", "alteração informações de controle da empresa"),
  "22": o("CHANGED", "alteração seu número"),
  "51": o("REJECTED", "entrada rejeitada"),
};

/** Banco Safra CNAB 400 retorno (manual nota 6.2.2). */
const SAFRA_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "04": o("CHANGED", "transferência de carteira (entrada)"),
  "05": o("WRITTEN_OFF", "transferência de carteira (baixa)"),
  "06": o("PAID", "liquidação normal"),
  "09": o("WRITTEN_OFF", "baixado automaticamente"),
  "10": o("WRITTEN_OFF", "baixado conforme instruções"),
  "11": o("UNKNOWN", "títulos em ser (arquivo mensal)"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "vencimento alterado"),
  "15": o("PAID", "liquidação em cartório"),
  "19": o("CHANGED", "confirmação de instrução de protesto"),
  "20": o("CHANGED", "confirmação de sustar protesto"),
  "21": o("CHANGED", "transferência de beneficiário"),
  "23": o("CHANGED", "título enviado a cartório"),
  "40": o("PROTESTED", "baixa de título protestado"),
  "41": o("PAID", "liquidação de título baixado"),
  "42": o("CHANGED", "título retirado do cartório"),
  "43": o("FEE", "despesa de cartório"),
  "44": o("CHANGED", "aceite do título DDA pelo pagador"),
  "45": o("CHANGED", "não aceite do título DDA pelo pagador"),
  "51": o("CHANGED", "valor do título alterado"),
  "52": o("CHANGED", "acerto de data de emissão"),
  "53": o("CHANGED", "acerto de código de espécie"),
  "54": o("CHANGED", "alteração de seu número"),
  "56": o("CHANGED", "instrução negativação aceita"),
  "57": o("CHANGED", "instrução baixa de negativação aceita"),
  "58": o("CHANGED", "instrução não negativar aceita"),
};

/** Banco Inter CNAB 400 retorno (Manual CNAB400 Inter v1.1 §5.2, 90–91): four codes. */
const INTER_400: Tabela = {
  "02": o("REGISTERED", "em aberto (boleto emitido)"),
  "03": o("REJECTED", "erro (entrada rejeitada)"),
  "06": o("PAID", "pago"),
  "07": o("WRITTEN_OFF", "baixado"),
};

/** BRB retorno (manual v077, "Leiaute Retorno" 109–110): the seven codes it lists. */
const BRB_400: Tabela = {
  "00": o("WRITTEN_OFF", "baixa por devolução"),
  "02": o("REGISTERED", "entrada de título"),
  "05": o("PAID", "liquidação sem registro ou modalidade 1"),
  "06": o("PAID", "liquidação normal com registro ou modalidades 2 e 3"),
  "09": o("REJECTED", "liquidação ou instrução rejeitada"),
  "15": o("PAID", "liquidação regularizada sem registro ou modalidade 1"),
  "16": o("PAID", "liquidação regularizada com registro ou modalidades 2 e 3"),
};

/**
 * C6 CNAB 400 retorno: only the code the reference file and its test name (06, liquidação do título); no C6
 * manual was readable here, so every other code is UNKNOWN until one is (cobranca.md §3.16).
 */
const C6_400: Tabela = {
  "06": o("PAID", "liquidação do título"),
};

/**
 * Caixa CNAB 400 retorno (SIGCB manual v015, NE033). 02 is the manual baixa, not the entrada (01); a
 * rejection is 99 with its motivo at 80–82 (NE032).
 */
const CAIXA_400: Tabela = {
  "01": o("REGISTERED", "entrada confirmada"),
  "02": o("WRITTEN_OFF", "baixa manual confirmada"),
  "03": o("CHANGED", "abatimento concedido"),
  "04": o("CHANGED", "abatimento cancelado"),
  "05": o("CHANGED", "vencimento alterado"),
  "06": o("CHANGED", "uso da empresa alterado"),
  "07": o("CHANGED", "prazo de protesto alterado"),
  "08": o("CHANGED", "prazo de devolução alterado"),
  "09": o("CHANGED", "alteração confirmada"),
  "10": o("CHANGED", "alteração com reemissão de boleto confirmada"),
  "11": o("CHANGED", "alteração da opção de protesto para devolução confirmada"),
  "12": o("CHANGED", "alteração da opção de devolução para protesto confirmada"),
  "20": o("UNKNOWN", "em ser"),
  "21": o("PAID", "liquidação"),
  "22": o("PAID", "liquidação em cartório"),
  "23": o("WRITTEN_OFF", "baixa por devolução"),
  "25": o("PROTESTED", "baixa por protesto"),
  "26": o("CHANGED", "título enviado para cartório"),
  "27": o("CHANGED", "sustação de protesto"),
  "28": o("CHANGED", "estorno de protesto"),
  "29": o("CHANGED", "estorno de sustação de protesto"),
  "30": o("CHANGED", "alteração de título"),
  "31": o("FEE", "tarifa sobre título vencido"),
  "32": o("FEE", "outras tarifas de alteração"),
  "33": o("UNKNOWN", "estorno de baixa/liquidação"),
  "34": o("FEE", "tarifas diversas"),
  "35": o("PAID", "liquidação on-line"),
  "36": o("UNKNOWN", "estorno de liquidação on-line"),
  "37": o("CHANGED", "transferência para a cobrança simples"),
  "38": o("CHANGED", "transferência para a cobrança descontada"),
  "51": o("CHANGED", "reconhecido pelo pagador DDA"),
  "52": o("CHANGED", "não reconhecido pelo pagador DDA"),
  "53": o("CHANGED", "recusado no DDA"),
  "99": o("REJECTED", "rejeição do título"),
};

/** Sicredi CNAB 400 retorno, cobrança com e sem registro (Manual CNAB 400 Sicredi, August 2019, §6.2). */
const SICREDI_400: Tabela = {
  "02": o("REGISTERED", "entrada confirmada"),
  "03": o("REJECTED", "entrada rejeitada"),
  "06": o("PAID", "liquidação normal"),
  "09": o("WRITTEN_OFF", "baixado automaticamente via arquivo"),
  "10": o("WRITTEN_OFF", "baixado conforme instruções da cooperativa de crédito"),
  "12": o("CHANGED", "abatimento concedido"),
  "13": o("CHANGED", "abatimento cancelado"),
  "14": o("CHANGED", "vencimento alterado"),
  "15": o("PAID", "liquidação em cartório"),
  "17": o("PAID", "liquidação após baixa"),
  "19": o("CHANGED", "confirmação de recebimento de instrução de protesto"),
  "20": o("CHANGED", "confirmação de recebimento de instrução de sustação de protesto"),
  "23": o("CHANGED", "entrada de título em cartório"),
  "24": o("REJECTED", "entrada rejeitada por CEP irregular"),
  "27": o("REJECTED", "baixa rejeitada"),
  "28": o("FEE", "tarifa"),
  "29": o("CHANGED", "rejeição do pagador (DDA)"),
  "30": o("REJECTED", "alteração rejeitada"),
  "32": o("REJECTED", "instrução rejeitada"),
  "33": o("CHANGED", "confirmação de pedido de alteração de outros dados"),
  "34": o("CHANGED", "retirado de cartório e manutenção em carteira"),
  "35": o("CHANGED", "aceite do pagador (DDA)"),
  "78": o("CHANGED", "confirmação de recebimento de pedido de negativação"),
  "79": o("CHANGED", "confirmação de recebimento de pedido de exclusão de negativação"),
  "80": o("CHANGED", "confirmação de entrada de negativação"),
  "81": o("REJECTED", "entrada de negativação rejeitada"),
  "82": o("CHANGED", "confirmação de exclusão de negativação"),
  "83": o("REJECTED", "exclusão de negativação rejeitada"),
  "84": o("CHANGED", "exclusão de negativação por outros motivos"),
  "85": o("UNKNOWN", "ocorrência informacional por outros motivos"),
};

/** Key: `${banco}:${layout}`; "*:240" is the FEBRABAN fallback for other CNAB 240 banks. */
export const OCORRENCIAS: Readonly<Record<string, Tabela>> = {
  "*:240": FEBRABAN_240,
  "001:240": FEBRABAN_240,
  "033:240": FEBRABAN_240,
  "104:240": CAIXA_240,
  "748:240": FEBRABAN_240,
  "756:240": FEBRABAN_240,
  "085:240": AILOS_240,
  "001:400": BB_CBR643,
  "033:400": SANTANDER_400,
  "237:400": BRADESCO_400,
  "341:400": ITAU_400,
  "136:400": UNICRED_400,
  "004:400": BNB_400,
  "133:400": BRADESCO_400,
  "422:400": SAFRA_400,
  "077:400": INTER_400,
  "070:400": BRB_400,
  "336:400": C6_400,
  "104:400": CAIXA_400,
  "748:400": SICREDI_400,
};

export function mapearOcorrencia(banco: string, layout: 240 | 400, codigo: string): Ocorrencia {
  const t = OCORRENCIAS[`${banco}:${layout}`] ?? (layout === 240 ? OCORRENCIAS["*:240"] : undefined);
  return t?.[codigo] ?? o("UNKNOWN", `código ${codigo} sem mapeamento para o banco ${banco} (CNAB ${layout})`);
}
