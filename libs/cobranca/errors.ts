/**
 * Every failure of the engine is a CobrancaError: a stable machine code, the path of the offending
 * input field (when there is one) and a human message. Callers branch on `code`, never on `message`.
 */
export const ERROR_CODES = [
  "VALOR_INVALIDO", // not an integer number of cents, negative, NaN
  "VALOR_ACIMA_DO_LIMITE", // >= 10^10 cents (or above a bank's own cap)
  "DATA_INVALIDA", // not a real calendar date
  "DATA_FORA_DO_INTERVALO", // due date before 2000-07-03 / beyond 2099, or a fator out of range
  "BANCO_DESCONHECIDO", // no table for that bank code
  "CARTEIRA_INVALIDA", // carteira not accepted by the bank variant
  "CONVENIO_INVALIDO", // convênio / código de beneficiário of the wrong shape
  "CAMPO_OBRIGATORIO", // a required input field is missing or empty
  "CAMPO_INVALIDO", // wrong characters / shape for a field
  "CAMPO_EXCEDE_TAMANHO", // a value does not fit its fixed-width slot (never truncated silently)
  "TEXTO_NAO_CONVERSIVEL", // text with characters that cannot be folded to ASCII
  "CPF_CNPJ_INVALIDO",
  "CODIGO_BARRAS_INVALIDO", // shape of a 44-digit barcode
  "LINHA_DIGITAVEL_INVALIDA", // shape of a 47-digit linha
  "DV_INVALIDO", // a check digit does not match (DV geral, field DV, NN DV, campo-livre DV)
  "MOEDA_INVALIDA", // currency digit other than 9
  "BOLETO_DE_ARRECADACAO", // starts with 8: not a cobrança boleto
  "PIX_INVALIDO", // BR Code shape / TLV / limits
  "PIX_CRC_INVALIDO",
  "CNAB_ESTRUTURA_INVALIDA", // structural checker findings (see checker.ts)
  "CNAB_LAYOUT_DESCONHECIDO", // no layout for (bank, layout, direction)
  "LOTE_VAZIO",
  "LIMITE_DE_REGISTROS", // too many records for a lote/file
  "PDF_FALHOU",
] as const;

export type CobrancaErrorCode = (typeof ERROR_CODES)[number];

export class CobrancaError extends Error {
  override readonly name = "CobrancaError";
  readonly code: CobrancaErrorCode;
  /** Dotted path of the input field at fault, e.g. "titulos[3].pagador.documento". */
  readonly field: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: CobrancaErrorCode, message: string, field?: string, details?: Record<string, unknown>) {
    super(field ? `${code} (${field}): ${message}` : `${code}: ${message}`);
    this.code = code;
    this.field = field;
    this.details = details;
  }

  toJSON(): { code: CobrancaErrorCode; field?: string; message: string; details?: Record<string, unknown> } {
    return {
      code: this.code,
      ...(this.field ? { field: this.field } : {}),
      message: this.message,
      ...(this.details ? { details: { ...this.details } } : {}),
    };
  }
}

export function fail(code: CobrancaErrorCode, message: string, field?: string, details?: Record<string, unknown>): never {
  throw new CobrancaError(code, message, field, details);
}

export function isCobrancaError(e: unknown): e is CobrancaError {
  return e instanceof CobrancaError;
}
