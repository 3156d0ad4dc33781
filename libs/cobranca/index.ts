/**
 * libs/cobranca — the billing domain engine. Pure functions over data: no I/O, no clock, no network.
 * Dates are calendar dates; money is integer cents; every failure is a CobrancaError with a stable code.
 * See README.md.
 */
export { CobrancaError, ERROR_CODES, isCobrancaError, type CobrancaErrorCode } from "./errors.js";
export {
  type CalendarDate,
  type LocalDateTime,
  addDays,
  date,
  diffDays,
  isValidDate,
  isoDate,
  parseIsoDate,
  saoPauloDate,
  saoPauloDateTime,
} from "./date.js";
export {
  FATOR_WINDOW_FUTURE,
  FATOR_WINDOW_PAST,
  VALOR_MAXIMO_CENTAVOS,
  barcodeToLinha,
  buildBarcode,
  decodeFator,
  fatorVencimento,
  formatLinha,
  linhaToBarcode,
  parseBarcode,
  parseBoletoCode,
  parseLinha,
  type BarcodeParts,
  type FatorDecoding,
  type ParsedBarcode,
} from "./boleto.js";
export {
  dvGeral,
  mod10,
  mod11BB,
  mod11Bradesco,
  mod11S,
  sicoob3197,
  banrisulNC,
  CHECK_DIGITS,
  type CheckDigitAlgorithm,
} from "./checkdigits.js";
export { BANKS, bancoAtribuiNossoNumero, bankCodes, type BankDef, type BankVariant } from "./banks.js";
export {
  campoLivre,
  decodeCampoLivre,
  gerarBoleto,
  getBank,
  lerBoleto,
  nossoNumero,
  type Boleto,
  type BoletoInput,
  type CampoLivre,
  type DadosBancarios,
  type NossoNumero,
} from "./campo-livre.js";
export {
  PIX_LIMITS,
  buildPixDinamico,
  buildPixEstatico,
  crc16ccitt,
  parsePix,
  tipoChavePix,
  type PixDinamico,
  type PixEstatico,
  type PixParsed,
} from "./pix.js";
export { cnabText, documento, foldAscii } from "./text.js";
export { assertCnab, checkCnab, splitLines, type CheckResult, type Finding } from "./cnab/checker.js";
export {
  gerarRemessa,
  lerRemessa,
  reescreverRemessa,
  CNAB400_PROFILES,
  type Beneficiario,
  type Encargo,
  type Pessoa,
  type RemessaInput,
  type RemessaLida,
  type RemessaOutput,
  type Titulo,
  type TituloLido,
} from "./cnab/remessa.js";
export { CNAB240_PROFILES, profile240, type Cnab240Profile } from "./cnab/layouts240.js";
export { lerRetorno, type EventoRetorno, type RetornoLido } from "./cnab/retorno.js";
export { ESTADOS, OCORRENCIAS, mapearOcorrencia, type EstadoCanonico, type Ocorrencia } from "./cnab/ocorrencias.js";
export { defineRecord, decodeRecord, encodeRecord, overrideRecord, type FieldDef, type RecordLayout, type Warning } from "./cnab/record.js";
export { agruparSubLotes, atribuirNsa, maxTitulosPorArquivo, type ChaveAgrupamento, type ItemAgrupavel, type SubLote } from "./sublotes.js";
export { renderizarBoletoPdf, renderizarLotePdf, formatarValor, type FichaInput, type OpcoesPdf, type PessoaFicha } from "./pdf/ficha.js";
export { itfElements, itfGeometry } from "./pdf/itf.js";
