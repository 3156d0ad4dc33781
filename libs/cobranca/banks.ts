/**
 * Bank rules as data: for every bank, the inputs of its campo livre and nosso número, the check digits
 * derived from them (by algorithm name) and the 25-digit campo livre as a list of segments. The engine
 * in campo-livre.ts interprets these tables; adding a bank is adding an entry here (README).
 * Facts: docs/domain/cobranca.md §3; vectors in banks.test.ts.
 */
import type { CheckDigitAlgorithm } from "./checkdigits.js";

/** An input of a bank variant: digits only, zero-padded on the left to `len`. */
export interface InputSpec {
  readonly len: number;
  /** Exact number of significant digits required (e.g. a 7-digit BB convênio); else ≤ len. */
  readonly exact?: boolean;
  readonly default?: string;
  /** Allowed values after padding (carteiras, modalidades). */
  readonly oneOf?: readonly string[];
}

export type Operand = string | { readonly field: string; readonly len: number };

export type Derivation =
  | { readonly name: string; readonly concat: readonly string[] }
  | { readonly name: string; readonly dv: CheckDigitAlgorithm; readonly over: readonly Operand[] }
  /** Part of a value, for printing (Unicred's conta with its DV, printed as conta-DV). */
  | { readonly name: string; readonly slice: string; readonly start: number; readonly len: number }
  /** A fixed value that takes part in a check digit or a printed number (BRB's "070" inside its nosso número). */
  | { readonly name: string; readonly const: string };

export type Segment =
  | { readonly field: string }
  | { readonly const: string }
  | { readonly slice: string; readonly start: number; readonly len: number }
  /** A check digit (or two, for Banrisul NC) over everything emitted before it. */
  | { readonly dvPrevious: CheckDigitAlgorithm; readonly len: number }
  /** Sicredi: "1" when the value field of the barcode is filled, else "0". */
  | { readonly valueFilled: true };

export interface VariantSelector {
  readonly convenioLength?: readonly number[];
  readonly carteiras?: readonly string[];
  /** Significant digits (leading zeros ignored) of the nosso número. */
  readonly nossoNumeroMinDigits?: number;
  readonly nossoNumeroMaxDigits?: number;
}

export interface BankVariant {
  readonly id: string;
  readonly when?: VariantSelector;
  readonly inputs: Readonly<Record<string, InputSpec>>;
  readonly derive: readonly Derivation[];
  readonly campoLivre: readonly Segment[];
  /** Printed nosso número, `{name}` placeholders. */
  readonly nossoNumeroImpresso: string;
  /** Nosso número as digits (+ DV) for CNAB and storage, `{name}` placeholders. */
  readonly nossoNumeroCompleto: string;
  /** Agência/código do beneficiário as printed on the ficha. */
  readonly agenciaCodigoImpresso: string;
  /** Carteira as printed. */
  readonly carteiraImpressa: string;
  /** Text of "Local de pagamento". */
  readonly localPagamento?: string;
}

export interface BankDef {
  readonly code: string;
  /** Code + DV printed on the ficha: a constant (Caixa prints 104-0 although mod 11 gives X). */
  readonly codeWithDv: string;
  readonly name: string;
  /** Short name for CNAB headers. */
  readonly cnabName: string;
  readonly variants: readonly BankVariant[];
  /** Value cap in cents if lower than the global 9,999,999,999. */
  readonly valorMaximoCentavos?: number;
  /**
   * The bank numbers the títulos it registers: a remessa goes without a nosso número and the retorno brings
   * the assigned one back (decisions 0023, 0033). Nobody else may hand one out for it.
   */
  readonly atribuiNossoNumero?: true;
}

const LOCAL_PADRAO = "PAGÁVEL EM QUALQUER BANCO ATÉ O VENCIMENTO";

const BB_CARTEIRAS = ["11", "12", "15", "16", "17", "18", "31", "51"];
const BB_COMMON_INPUTS = {
  agencia: { len: 4 },
  conta: { len: 8 },
  carteira: { len: 2, oneOf: BB_CARTEIRAS },
} as const;

export const BANKS: Readonly<Record<string, BankDef>> = {
  "001": {
    code: "001",
    codeWithDv: "001-9",
    name: "Banco do Brasil S.A.",
    cnabName: "BANCO DO BRASIL SA",
    variants: [
      {
        id: "bb-convenio-4",
        when: { convenioLength: [4] },
        inputs: { convenio: { len: 4, exact: true }, nossoNumero: { len: 7 }, ...BB_COMMON_INPUTS },
        derive: [
          { name: "nn", concat: ["convenio", "nossoNumero"] },
          { name: "nnDv", dv: "mod11BB", over: ["nn"] },
        ],
        campoLivre: [{ field: "nn" }, { field: "agencia" }, { field: "conta" }, { field: "carteira" }],
        nossoNumeroImpresso: "{nn}-{nnDv}",
        nossoNumeroCompleto: "{nn}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
      {
        id: "bb-convenio-6",
        when: { convenioLength: [6], nossoNumeroMaxDigits: 5 },
        inputs: { convenio: { len: 6, exact: true }, nossoNumero: { len: 5 }, ...BB_COMMON_INPUTS },
        derive: [
          { name: "nn", concat: ["convenio", "nossoNumero"] },
          { name: "nnDv", dv: "mod11BB", over: ["nn"] },
        ],
        campoLivre: [{ field: "nn" }, { field: "agencia" }, { field: "conta" }, { field: "carteira" }],
        nossoNumeroImpresso: "{nn}-{nnDv}",
        nossoNumeroCompleto: "{nn}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
      {
        // Legacy "sem registro" NN of 17 free digits with service code 21 (BB-DOC Anexo IX).
        id: "bb-convenio-6-nn17",
        when: { convenioLength: [6], nossoNumeroMinDigits: 6 },
        inputs: { convenio: { len: 6, exact: true }, nossoNumero: { len: 17 }, carteira: { len: 2, default: "18", oneOf: ["16", "18"] } },
        derive: [],
        campoLivre: [{ field: "convenio" }, { field: "nossoNumero" }, { const: "21" }],
        nossoNumeroImpresso: "{nossoNumero}",
        nossoNumeroCompleto: "{nossoNumero}",
        agenciaCodigoImpresso: "{convenio}",
        carteiraImpressa: "{carteira}",
      },
      {
        id: "bb-convenio-7",
        when: { convenioLength: [7] },
        inputs: {
          convenio: { len: 7, exact: true },
          nossoNumero: { len: 10 },
          carteira: BB_COMMON_INPUTS.carteira,
          agencia: { len: 4, default: "0" },
          conta: { len: 8, default: "0" },
        },
        derive: [{ name: "nn", concat: ["convenio", "nossoNumero"] }],
        campoLivre: [{ const: "000000" }, { field: "nn" }, { field: "carteira" }],
        nossoNumeroImpresso: "{nn}",
        nossoNumeroCompleto: "{nn}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
      {
        id: "bb-convenio-8",
        when: { convenioLength: [8] },
        inputs: {
          convenio: { len: 8, exact: true },
          nossoNumero: { len: 9 },
          carteira: BB_COMMON_INPUTS.carteira,
          agencia: { len: 4, default: "0" },
          conta: { len: 8, default: "0" },
        },
        derive: [{ name: "nn", concat: ["convenio", "nossoNumero"] }],
        campoLivre: [{ const: "000000" }, { field: "nn" }, { field: "carteira" }],
        nossoNumeroImpresso: "{nn}",
        nossoNumeroCompleto: "{nn}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "237": {
    code: "237",
    codeWithDv: "237-2",
    name: "Banco Bradesco S.A.",
    cnabName: "BRADESCO",
    variants: [
      {
        id: "bradesco",
        inputs: {
          agencia: { len: 4 },
          carteira: { len: 2, oneOf: ["02", "04", "06", "09", "19", "21", "26"] },
          nossoNumero: { len: 11 },
          conta: { len: 7 },
        },
        derive: [{ name: "nnDv", dv: "mod11Bradesco", over: ["carteira", "nossoNumero"] }],
        campoLivre: [{ field: "agencia" }, { field: "carteira" }, { field: "nossoNumero" }, { field: "conta" }, { const: "0" }],
        nossoNumeroImpresso: "{carteira}/{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "341": {
    code: "341",
    codeWithDv: "341-7",
    name: "Itaú Unibanco S.A.",
    cnabName: "BANCO ITAU SA",
    variants: [
      {
        // Carteiras whose DAC of the NN skips agência/conta (ITAU-400 Anexo 4; UNVERIFIED list, see README).
        id: "itau-dac-carteira-nn",
        when: { carteiras: ["126", "131", "146", "150", "168"] },
        inputs: { carteira: { len: 3 }, nossoNumero: { len: 8 }, agencia: { len: 4 }, conta: { len: 5 } },
        derive: [
          { name: "dac", dv: "mod10", over: ["carteira", "nossoNumero"] },
          { name: "dacConta", dv: "mod10", over: ["agencia", "conta"] },
        ],
        campoLivre: [
          { field: "carteira" },
          { field: "nossoNumero" },
          { field: "dac" },
          { field: "agencia" },
          { field: "conta" },
          { field: "dacConta" },
          { const: "000" },
        ],
        nossoNumeroImpresso: "{carteira}/{nossoNumero}-{dac}",
        nossoNumeroCompleto: "{nossoNumero}{dac}",
        agenciaCodigoImpresso: "{agencia} / {conta}-{dacConta}",
        carteiraImpressa: "{carteira}",
      },
      {
        id: "itau-especial",
        when: { carteiras: ["106", "107", "122", "142", "143", "195", "196", "198"] },
        inputs: {
          carteira: { len: 3 },
          nossoNumero: { len: 8 },
          seuNumero: { len: 7 },
          codigoCliente: { len: 5 },
          agencia: { len: 4, default: "0" },
          conta: { len: 5, default: "0" },
        },
        derive: [
          { name: "dac", dv: "mod10", over: ["carteira", "nossoNumero"] },
          { name: "dacConta", dv: "mod10", over: ["agencia", "conta"] },
        ],
        campoLivre: [
          { field: "carteira" },
          { field: "nossoNumero" },
          { field: "seuNumero" },
          { field: "codigoCliente" },
          { dvPrevious: "mod10", len: 1 },
          { const: "0" },
        ],
        nossoNumeroImpresso: "{carteira}/{nossoNumero}-{dac}",
        nossoNumeroCompleto: "{nossoNumero}{dac}",
        agenciaCodigoImpresso: "{agencia} / {conta}-{dacConta}",
        carteiraImpressa: "{carteira}",
      },
      {
        id: "itau",
        inputs: {
          carteira: { len: 3, oneOf: ["104", "105", "108", "109", "110", "111", "112", "115", "121", "145", "175", "180", "188"] },
          nossoNumero: { len: 8 },
          agencia: { len: 4 },
          conta: { len: 5 },
        },
        derive: [
          { name: "dac", dv: "mod10", over: ["agencia", "conta", "carteira", "nossoNumero"] },
          { name: "dacConta", dv: "mod10", over: ["agencia", "conta"] },
        ],
        campoLivre: [
          { field: "carteira" },
          { field: "nossoNumero" },
          { field: "dac" },
          { field: "agencia" },
          { field: "conta" },
          { field: "dacConta" },
          { const: "000" },
        ],
        nossoNumeroImpresso: "{carteira}/{nossoNumero}-{dac}",
        nossoNumeroCompleto: "{nossoNumero}{dac}",
        agenciaCodigoImpresso: "{agencia} / {conta}-{dacConta}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "104": {
    code: "104",
    codeWithDv: "104-0",
    name: "Caixa Econômica Federal",
    cnabName: "CAIXA ECONOMICA FEDERAL",
    valorMaximoCentavos: 999_999_999,
    variants: [
      {
        id: "caixa-sigcb",
        inputs: {
          convenio: { len: 6, exact: true },
          nossoNumero: { len: 15 },
          modalidade: { len: 1, default: "1", oneOf: ["1", "2"] },
          emissao: { len: 1, default: "4" },
          agencia: { len: 4, default: "0" },
        },
        derive: [
          { name: "nn", concat: ["modalidade", "emissao", "nossoNumero"] },
          { name: "nnDv", dv: "mod11S", over: ["nn"] },
          { name: "convenioDv", dv: "mod11S", over: ["convenio"] },
        ],
        campoLivre: [
          { field: "convenio" },
          { field: "convenioDv" },
          { slice: "nn", start: 2, len: 3 },
          { slice: "nn", start: 0, len: 1 },
          { slice: "nn", start: 5, len: 3 },
          { slice: "nn", start: 1, len: 1 },
          { slice: "nn", start: 8, len: 9 },
          { dvPrevious: "mod11S", len: 1 },
        ],
        nossoNumeroImpresso: "{nn}-{nnDv}",
        nossoNumeroCompleto: "{nn}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {convenio}-{convenioDv}",
        carteiraImpressa: "RG",
        localPagamento: "PREFERENCIALMENTE NAS CASAS LOTÉRICAS ATÉ O VALOR LIMITE",
      },
    ],
  },
  "033": {
    code: "033",
    codeWithDv: "033-7",
    name: "Banco Santander (Brasil) S.A.",
    cnabName: "BANCO SANTANDER",
    variants: [
      {
        id: "santander",
        inputs: {
          convenio: { len: 7 },
          nossoNumero: { len: 12 },
          carteira: { len: 3, oneOf: ["101", "102", "104", "201"] },
          ios: { len: 1, default: "0" },
          agencia: { len: 4, default: "0" },
        },
        derive: [{ name: "nnDv", dv: "mod11S", over: ["nossoNumero"] }],
        campoLivre: [
          { const: "9" },
          { field: "convenio" },
          { field: "nossoNumero" },
          { field: "nnDv" },
          { field: "ios" },
          { field: "carteira" },
        ],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {convenio}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "756": {
    code: "756",
    codeWithDv: "756-0",
    name: "Sicoob (Bancoob)",
    cnabName: "SICOOB",
    variants: [
      {
        id: "sicoob",
        inputs: {
          carteira: { len: 1, default: "1", oneOf: ["1", "3"] },
          agencia: { len: 4 }, // cooperativa
          modalidade: { len: 2, default: "01" },
          convenio: { len: 7 }, // código do cliente
          nossoNumero: { len: 7 },
          parcela: { len: 3, default: "001" },
        },
        derive: [{ name: "nnDv", dv: "sicoob3197", over: ["agencia", { field: "convenio", len: 10 }, "nossoNumero"] }],
        campoLivre: [
          { field: "carteira" },
          { field: "agencia" },
          { field: "modalidade" },
          { field: "convenio" },
          { field: "nossoNumero" },
          { field: "nnDv" },
          { field: "parcela" },
        ],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {convenio}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "748": {
    code: "748",
    codeWithDv: "748-X",
    name: "Banco Cooperativo Sicredi S.A.",
    cnabName: "SICREDI",
    variants: [
      {
        id: "sicredi",
        inputs: {
          tipoCobranca: { len: 1, default: "1", oneOf: ["1", "3"] },
          ano: { len: 2 },
          byteGeracao: { len: 1, default: "2", oneOf: ["1", "2", "3", "4", "5", "6", "7", "8", "9"] },
          nossoNumero: { len: 5 },
          agencia: { len: 4 }, // cooperativa
          posto: { len: 2 },
          convenio: { len: 5 }, // código do beneficiário
          carteira: { len: 1, default: "1", oneOf: ["1"] },
        },
        derive: [{ name: "nnDv", dv: "mod11S", over: ["agencia", "posto", "convenio", "ano", "byteGeracao", "nossoNumero"] }],
        campoLivre: [
          { field: "tipoCobranca" },
          { field: "carteira" },
          { field: "ano" },
          { field: "byteGeracao" },
          { field: "nossoNumero" },
          { field: "nnDv" },
          { field: "agencia" },
          { field: "posto" },
          { field: "convenio" },
          { valueFilled: true },
          { const: "0" },
          { dvPrevious: "mod11S", len: 1 },
        ],
        nossoNumeroImpresso: "{ano}/{byteGeracao}{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{ano}{byteGeracao}{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia}.{posto}.{convenio}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "041": {
    code: "041",
    codeWithDv: "041-8",
    name: "Banco do Estado do Rio Grande do Sul S.A.",
    cnabName: "BANRISUL",
    variants: [
      {
        id: "banrisul",
        inputs: {
          produto: { len: 1, default: "2", oneOf: ["1", "2"] },
          agencia: { len: 4 },
          convenio: { len: 7 },
          nossoNumero: { len: 8 },
          carteira: { len: 1, default: "1" },
        },
        derive: [{ name: "nnNc", dv: "banrisulNC", over: ["nossoNumero"] }],
        campoLivre: [
          { field: "produto" },
          { const: "1" },
          { field: "agencia" },
          { field: "convenio" },
          { field: "nossoNumero" },
          { const: "40" },
          { dvPrevious: "banrisulNC", len: 2 },
        ],
        nossoNumeroImpresso: "{nossoNumero}-{nnNc}",
        nossoNumeroCompleto: "{nossoNumero}{nnNc}",
        agenciaCodigoImpresso: "{agencia} / {convenio}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "085": {
    code: "085",
    // Ailos prints 085-1 (the mod 11 rule would give X, as with Caixa); BRC and LB hard-code it too.
    codeWithDv: "085-1",
    name: "Cooperativa Central Ailos",
    cnabName: "AILOS",
    variants: [
      {
        // Manual Técnico CNAB 240 Ailos v07 §4.1.4: convênio(6) + conta with its DV(8) + boleto number(9) + carteira(2).
        id: "ailos",
        inputs: {
          convenio: { len: 6 },
          conta: { len: 7 },
          nossoNumero: { len: 9 },
          carteira: { len: 2, default: "01" },
          agencia: { len: 4, default: "0" },
        },
        // The cooperative assigns the conta DV; it is modulo 11 (weights 2–9, 11 − r, > 9 → 0), as is the agência's.
        derive: [
          { name: "contaDv", dv: "mod11S", over: ["conta"] },
          { name: "agenciaDv", dv: "mod11S", over: ["agencia"] },
        ],
        campoLivre: [{ field: "convenio" }, { field: "conta" }, { field: "contaDv" }, { field: "nossoNumero" }, { field: "carteira" }],
        // §4.1.2: 17 digits, conta + DV (fixed) then the boleto's sequence.
        nossoNumeroImpresso: "{conta}{contaDv}{nossoNumero}",
        nossoNumeroCompleto: "{conta}{contaDv}{nossoNumero}",
        agenciaCodigoImpresso: "{agencia}-{agenciaDv} / {conta}-{contaDv}",
        carteiraImpressa: "{carteira}",
        localPagamento: "PAGAR PREFERENCIALMENTE NAS COOPERATIVAS DO SISTEMA AILOS",
      },
    ],
  },
  "136": {
    code: "136",
    // "Composição da Ficha de Compensação" (Unicred, 03/12/2019) §3: printed 136-8.
    codeWithDv: "136-8",
    name: "Unicred do Brasil",
    cnabName: "UNICRED",
    variants: [
      {
        // §3.10: agência (4, without DV) + conta with its DV (10) + nosso número with its DV (11).
        id: "unicred",
        inputs: {
          agencia: { len: 4 },
          conta: { len: 10 }, // with its DV, as the cooperative gives it
          nossoNumero: { len: 10 },
          carteira: { len: 2, default: "21", oneOf: ["21"] },
        },
        // §3.11: modulo 11, weights 2–9, 11 − r, 10 and 11 → 0.
        derive: [
          { name: "nnDv", dv: "mod11S", over: ["nossoNumero"] },
          { name: "contaNumero", slice: "conta", start: 0, len: 9 },
          { name: "contaDv", slice: "conta", start: 9, len: 1 },
        ],
        campoLivre: [{ field: "agencia" }, { field: "conta" }, { field: "nossoNumero" }, { field: "nnDv" }],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {contaNumero}-{contaDv}",
        carteiraImpressa: "{carteira}",
        localPagamento: "PAGÁVEL EM QUALQUER AGÊNCIA BANCÁRIA/CORRESPONDENTE BANCÁRIO",
      },
    ],
  },
  "004": {
    code: "004",
    codeWithDv: "004-3",
    name: "Banco do Nordeste do Brasil S.A.",
    cnabName: "B. DO NORDESTE",
    variants: [
      {
        // Campo livre as the reference vectors give it (banks.test): agência + conta with DV + NN + DV + tipo de
        // operação + 000. The "tipo de operação" is what the BNB manual says the barcode carries (nota 2):
        // 21 cobrança simples, 41 vinculada; 51 is the legacy sem registro one.
        id: "bnb",
        inputs: {
          agencia: { len: 4 },
          conta: { len: 8 }, // with its DV, as the bank gives it
          nossoNumero: { len: 7 },
          carteira: { len: 2, default: "21", oneOf: ["21", "41"] },
        },
        derive: [
          { name: "nnDv", dv: "mod11BNB", over: ["nossoNumero"] },
          { name: "contaNumero", slice: "conta", start: 0, len: 7 },
          { name: "contaDv", slice: "conta", start: 7, len: 1 },
        ],
        campoLivre: [
          { field: "agencia" },
          { field: "conta" },
          { field: "nossoNumero" },
          { field: "nnDv" },
          { field: "carteira" },
          { const: "000" },
        ],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia}/{contaNumero}-{contaDv}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "133": {
    code: "133",
    codeWithDv: "133-3",
    name: "Cresol Confederação",
    cnabName: "CRESOL",
    variants: [
      {
        // Bradesco's shape (cobranca.md §3.13): agência + carteira + NN(11) + código do cedente(7) + 0; the NN
        // DV is Bradesco's modulo 11 base 7 with P (the Cresol specification's examples 19/2 → 8, 19/1 → P).
        id: "cresol",
        inputs: {
          agencia: { len: 4 },
          carteira: { len: 2, default: "09", oneOf: ["09", "19"] },
          nossoNumero: { len: 11 },
          conta: { len: 7 }, // the código do cedente in Cresol's system (often the conta, without DV)
        },
        derive: [{ name: "nnDv", dv: "mod11Bradesco", over: ["carteira", "nossoNumero"] }],
        campoLivre: [{ field: "agencia" }, { field: "carteira" }, { field: "nossoNumero" }, { field: "conta" }, { const: "0" }],
        nossoNumeroImpresso: "{carteira}/{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {conta}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "422": {
    code: "422",
    codeWithDv: "422-7",
    name: "Banco Safra S.A.",
    cnabName: "BANCO SAFRA",
    variants: [
      {
        // Manual "Layout de Cobrança CNAB 400 – Banco Safra" (2016) §7.2.2: 7 (Safra) + agência with DV (5) +
        // conta with DV (9) + nosso número with DV (9) + 2 (cobrança registrada).
        id: "safra",
        inputs: {
          agencia: { len: 5 }, // with its DV
          conta: { len: 9 }, // with its DV
          nossoNumero: { len: 8 },
          carteira: { len: 1, default: "1", oneOf: ["1", "2"] }, // 1 simples, 2 vinculada (CNAB 108)
        },
        derive: [
          { name: "nnDv", dv: "mod11Safra", over: ["nossoNumero"] },
          { name: "agenciaNumero", slice: "agencia", start: 0, len: 4 },
          { name: "agenciaDv", slice: "agencia", start: 4, len: 1 },
          { name: "contaNumero", slice: "conta", start: 0, len: 8 },
          { name: "contaDv", slice: "conta", start: 8, len: 1 },
        ],
        campoLivre: [{ const: "7" }, { field: "agencia" }, { field: "conta" }, { field: "nossoNumero" }, { field: "nnDv" }, { const: "2" }],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agenciaNumero}-{agenciaDv} / {contaNumero}-{contaDv}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "077": {
    code: "077",
    codeWithDv: "077-9",
    name: "Banco Inter S.A.",
    cnabName: "INTER",
    atribuiNossoNumero: true,
    variants: [
      {
        // Manual CNAB400 Inter v1.1 §6.1.3: agência 0001 + carteira (3) + número da operação (7) + nosso número
        // with its DV (11). Inter assigns the nosso número (§4.2: zeros in the remessa, the number in the retorno),
        // so the caller gives the number Inter returned (decision 0023). The DV is modulo 10 over agência +
        // carteira + NN, as the reference library's 46 vectors give it (banks-2026.test).
        id: "inter",
        inputs: {
          agencia: { len: 4, default: "0001", oneOf: ["0001"] },
          carteira: { len: 3, default: "112", oneOf: ["110", "112"] },
          convenio: { len: 7 }, // the número da operação Inter shows in its CNAB retorno screen
          nossoNumero: { len: 10 },
        },
        derive: [{ name: "nnDv", dv: "mod10", over: ["agencia", "carteira", "nossoNumero"] }],
        campoLivre: [{ field: "agencia" }, { field: "carteira" }, { field: "convenio" }, { field: "nossoNumero" }, { field: "nnDv" }],
        nossoNumeroImpresso: "{agencia}/{carteira}/{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{agencia} / {convenio}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "070": {
    code: "070",
    codeWithDv: "070-1",
    name: "BRB - Banco de Brasília S.A.",
    cnabName: "BRB",
    variants: [
      {
        // "BRB Cobrança – Manual e Leiautes" (version 077, 2017), "Composição Barra-Linha BRB": the chave BRB is
        // the incremento (3) + the código do beneficiário (conta, 10: agência 3 + conta 7) + the nosso número
        // MSSSSSS070dd (modalidade, sequencial 6, 070, duplo dígito). The incremento is the top of a 9-digit
        // sequence ("concatenated with positions 2 to 7 of the nosso número"), so it is the nosso número's first
        // three digits here. The duplo dígito is Banrisul's (modulo 10, then modulo 11 weights 2–7 with the
        // remainder-1 correction) over the first 23 digits of the chave.
        id: "brb",
        inputs: {
          agencia: { len: 3 },
          conta: { len: 7 },
          carteira: { len: 1, default: "2", oneOf: ["1", "2", "3"] }, // the modalidade: 1 and 2 emitted by the beneficiário, 3 by BRB
          nossoNumero: { len: 9 },
        },
        derive: [
          { name: "incremento", slice: "nossoNumero", start: 0, len: 3 },
          { name: "sequencial", slice: "nossoNumero", start: 3, len: 6 },
          { name: "bancoNn", const: "070" },
          { name: "nn", concat: ["carteira", "sequencial", "bancoNn"] },
          { name: "nnDv", dv: "banrisulNC", over: ["incremento", "agencia", "conta", "nn"] },
        ],
        campoLivre: [
          { slice: "nossoNumero", start: 0, len: 3 },
          { field: "agencia" },
          { field: "conta" },
          { field: "carteira" },
          { slice: "nossoNumero", start: 3, len: 6 },
          { const: "070" },
          { dvPrevious: "banrisulNC", len: 2 },
        ],
        nossoNumeroImpresso: "{nn}{nnDv}",
        nossoNumeroCompleto: "{nn}{nnDv}",
        agenciaCodigoImpresso: "{agencia} - {conta}",
        carteiraImpressa: "{carteira}",
      },
    ],
  },
  "336": {
    code: "336",
    codeWithDv: "336-0",
    name: "Banco C6 S.A.",
    cnabName: "C6",
    atribuiNossoNumero: true,
    variants: [
      {
        // Campo livre as the reference libraries give it (no C6 manual was readable here; cobranca.md §3.16):
        // código do beneficiário (12) + nosso número (10) + carteira (2) + layout identifier (1: 3 when C6
        // issues the boleto, 4 when the beneficiário does). C6 assigns the nosso número of the boletos it
        // registers, so the caller gives the number C6 returned (decision 0023). The number's DV, which the
        // barcode does not carry, is Bradesco's modulo 11 base 7 with P over 0 + carteira + NN; the retorno
        // writes 0 + NN + DV.
        id: "c6",
        inputs: {
          convenio: { len: 12 }, // the código do beneficiário (cedente) C6 gives
          nossoNumero: { len: 10 },
          carteira: { len: 2 },
          modalidade: { len: 1, default: "3", oneOf: ["3", "4"] },
        },
        derive: [
          { name: "zero", const: "0" },
          { name: "nnDv", dv: "mod11Bradesco", over: ["zero", "carteira", "nossoNumero"] },
        ],
        campoLivre: [{ field: "convenio" }, { field: "nossoNumero" }, { field: "carteira" }, { field: "modalidade" }],
        nossoNumeroImpresso: "{nossoNumero}-{nnDv}",
        nossoNumeroCompleto: "{zero}{nossoNumero}{nnDv}",
        agenciaCodigoImpresso: "{convenio}",
        carteiraImpressa: "{carteira}",
        localPagamento: "PAGÁVEL EM CANAIS ELETRÔNICOS, AGÊNCIAS OU CORRESPONDENTES BANCÁRIOS",
      },
    ],
  },
};

export const LOCAL_PAGAMENTO_PADRAO = LOCAL_PADRAO;

export function bankCodes(): string[] {
  return Object.keys(BANKS).sort();
}

/** Whether the bank assigns the nosso número of the títulos it registers (BankDef.atribuiNossoNumero). */
export function bancoAtribuiNossoNumero(banco: string): boolean {
  return BANKS[banco]?.atribuiNossoNumero === true;
}
