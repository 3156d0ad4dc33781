/** Interpreter of the bank tables (banks.ts): campo livre, nosso número and their check digits. */
import { BANKS, type BankDef, type BankVariant, type Operand, type Segment } from "./banks.js";
import { assertValorCentavos, barcodeToLinha, buildBarcode, formatLinha, linhaToBarcode, parseBarcode } from "./boleto.js";
import { CHECK_DIGITS } from "./checkdigits.js";
import type { CalendarDate } from "./date.js";
import { fail } from "./errors.js";

/** The bank-side inputs of a boleto. Which ones a bank needs is in its table (README lists them). */
export interface DadosBancarios {
  readonly banco: string;
  readonly nossoNumero: string;
  readonly carteira?: string;
  readonly agencia?: string;
  readonly conta?: string;
  /** Convênio / código do beneficiário / código do cliente, per bank. */
  readonly convenio?: string;
  readonly modalidade?: string;
  readonly emissao?: string;
  readonly posto?: string;
  readonly ano?: string;
  readonly byteGeracao?: string;
  readonly tipoCobranca?: string;
  readonly parcela?: string;
  readonly produto?: string;
  readonly ios?: string;
  readonly seuNumero?: string;
  readonly codigoCliente?: string;
  /** Pick a variant explicitly (otherwise chosen by the table's selectors). */
  readonly variante?: string;
}

export function getBank(code: string, field = "banco"): BankDef {
  const b = typeof code === "string" ? BANKS[code] : undefined;
  if (!b) fail("BANCO_DESCONHECIDO", `no rules for bank ${JSON.stringify(code)}; known: ${Object.keys(BANKS).sort().join(", ")}`, field);
  return b;
}

function significantDigits(s: string | undefined): number {
  if (!s) return 0;
  return s.replace(/^0+/, "").length;
}

export function selectVariant(d: DadosBancarios, field = "banco"): { bank: BankDef; variant: BankVariant } {
  const bank = getBank(d.banco, field);
  if (d.variante) {
    const v = bank.variants.find((x) => x.id === d.variante);
    if (!v) fail("CAMPO_INVALIDO", `bank ${bank.code} has no variant ${d.variante}`, "variante");
    return { bank, variant: v };
  }
  const convLen = d.convenio?.length;
  const nnDigits = significantDigits(d.nossoNumero);
  for (const v of bank.variants) {
    const w = v.when;
    if (!w) return { bank, variant: v };
    if (w.convenioLength && (convLen === undefined || !w.convenioLength.includes(convLen))) continue;
    if (w.carteiras && (d.carteira === undefined || !w.carteiras.includes(d.carteira.padStart(3, "0")))) continue;
    if (w.nossoNumeroMinDigits !== undefined && nnDigits < w.nossoNumeroMinDigits) continue;
    if (w.nossoNumeroMaxDigits !== undefined && nnDigits > w.nossoNumeroMaxDigits) continue;
    return { bank, variant: v };
  }
  if (bank.variants.some((v) => v.when?.convenioLength))
    fail("CONVENIO_INVALIDO", `bank ${bank.code}: no layout for a convênio of ${convLen ?? 0} digits`, "convenio");
  fail("CARTEIRA_INVALIDA", `bank ${bank.code}: carteira ${JSON.stringify(d.carteira)} not supported`, "carteira");
}

function errorCodeFor(name: string): "CONVENIO_INVALIDO" | "CARTEIRA_INVALIDA" | "CAMPO_EXCEDE_TAMANHO" {
  if (name === "convenio") return "CONVENIO_INVALIDO";
  if (name === "carteira") return "CARTEIRA_INVALIDA";
  return "CAMPO_EXCEDE_TAMANHO";
}

function operand(values: Map<string, string>, o: Operand): string {
  if (typeof o === "string") {
    const v = values.get(o);
    if (v === undefined) throw new Error(`bank table refers to unknown value ${o}`);
    return v;
  }
  const v = values.get(o.field);
  if (v === undefined) throw new Error(`bank table refers to unknown value ${o.field}`);
  return v.padStart(o.len, "0");
}

/** Normalise and validate the inputs of a variant; returns name → padded digits. */
function normaliseInputs(variant: BankVariant, d: DadosBancarios): Map<string, string> {
  const values = new Map<string, string>();
  const src = d as unknown as Record<string, unknown>;
  for (const [name, spec] of Object.entries(variant.inputs)) {
    let raw = src[name];
    if (raw === undefined || raw === null || raw === "") raw = spec.default;
    if (raw === undefined) fail("CAMPO_OBRIGATORIO", `bank ${d.banco} (${variant.id}) needs ${name}`, name);
    if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= 0) raw = String(raw);
    if (typeof raw !== "string" || !/^\d+$/.test(raw)) fail("CAMPO_INVALIDO", `${name} must be digits, got ${JSON.stringify(raw)}`, name);
    if (spec.exact && raw.length !== spec.len)
      fail(errorCodeFor(name), `${name} must have exactly ${spec.len} digits, got ${raw.length}`, name);
    let str: string = raw;
    if (str.length > spec.len) {
      const trimmed = str.replace(/^0+(?=\d)/, "");
      if (trimmed.length > spec.len)
        fail(errorCodeFor(name), `${name} has ${trimmed.length} digits, the bank allows ${spec.len}`, name, { max: spec.len });
      str = trimmed;
    }
    const v = str.padStart(spec.len, "0");
    if (spec.oneOf && !spec.oneOf.includes(v))
      fail(
        errorCodeFor(name) === "CAMPO_EXCEDE_TAMANHO" ? "CAMPO_INVALIDO" : errorCodeFor(name),
        `${name} ${v} not accepted by bank ${d.banco} (${variant.id}); allowed: ${spec.oneOf.join(", ")}`,
        name,
      );
    values.set(name, v);
  }
  return values;
}

function derive(variant: BankVariant, values: Map<string, string>): void {
  for (const dv of variant.derive) {
    if ("concat" in dv) values.set(dv.name, dv.concat.map((n) => operand(values, n)).join(""));
    else if ("slice" in dv) values.set(dv.name, operand(values, dv.slice).slice(dv.start, dv.start + dv.len));
    else if ("const" in dv) values.set(dv.name, dv.const);
    else values.set(dv.name, CHECK_DIGITS[dv.dv](dv.over.map((o) => operand(values, o)).join("")));
  }
}

function renderSegments(segments: readonly Segment[], values: Map<string, string>, valorCentavos: number): string {
  let out = "";
  for (const s of segments) {
    if ("field" in s) out += operand(values, s.field);
    else if ("const" in s) out += s.const;
    else if ("slice" in s) out += operand(values, s.slice).slice(s.start, s.start + s.len);
    else if ("dvPrevious" in s) {
      const dv = CHECK_DIGITS[s.dvPrevious](out);
      if (dv.length !== s.len || !/^\d+$/.test(dv)) throw new Error(`check digit ${s.dvPrevious} gave ${dv}`);
      out += dv;
    } else out += valorCentavos > 0 ? "1" : "0";
  }
  return out;
}

export function fillTemplate(t: string, values: ReadonlyMap<string, string> | Readonly<Record<string, string>>): string {
  const get = (k: string) => (values instanceof Map ? values.get(k) : (values as Record<string, string>)[k]);
  return t.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = get(k);
    if (v === undefined) throw new Error(`template value ${k} missing`);
    return v;
  });
}

export interface NossoNumero {
  readonly banco: string;
  readonly variante: string;
  /** Digits (+ DV) as sent in CNAB and stored: e.g. "000000000303" (Bradesco 11 + DV). DV may be "P"/"X". */
  readonly completo: string;
  /** As printed on the ficha, e.g. "06/00000000525-P". */
  readonly impresso: string;
  /** Every normalised input and derived value (padded), keyed by the table's names. */
  readonly valores: Readonly<Record<string, string>>;
}

/** Nosso número with its DV for a bank (no barcode). */
export function nossoNumero(d: DadosBancarios): NossoNumero {
  const { bank, variant } = selectVariant(d);
  const values = normaliseInputs(variant, d);
  derive(variant, values);
  return {
    banco: bank.code,
    variante: variant.id,
    completo: fillTemplate(variant.nossoNumeroCompleto, values),
    impresso: fillTemplate(variant.nossoNumeroImpresso, values),
    valores: Object.fromEntries(values),
  };
}

export interface CampoLivre extends NossoNumero {
  readonly campoLivre: string;
}

/** Campo livre (25 digits) + nosso número. The value is needed by Sicredi (value-filled flag). */
export function campoLivre(d: DadosBancarios, valorCentavos: number): CampoLivre {
  const { bank, variant } = selectVariant(d);
  const values = normaliseInputs(variant, d);
  derive(variant, values);
  const cl = renderSegments(variant.campoLivre, values, valorCentavos);
  if (!/^\d{25}$/.test(cl)) throw new Error(`bank table ${variant.id} produced a campo livre of ${cl.length} chars`);
  return {
    banco: bank.code,
    variante: variant.id,
    campoLivre: cl,
    completo: fillTemplate(variant.nossoNumeroCompleto, values),
    impresso: fillTemplate(variant.nossoNumeroImpresso, values),
    valores: Object.fromEntries(values),
  };
}

export interface BoletoInput {
  readonly dados: DadosBancarios;
  /** Calendar due date; null = contra-apresentação (fator 0000). */
  readonly vencimento: CalendarDate | null;
  readonly valorCentavos: number;
}

export interface Boleto {
  readonly banco: string;
  readonly bancoComDv: string;
  readonly variante: string;
  readonly codigoBarras: string;
  readonly linhaDigitavel: string;
  readonly linhaDigitavelFormatada: string;
  readonly campoLivre: string;
  readonly nossoNumero: string;
  readonly nossoNumeroImpresso: string;
  readonly agenciaCodigoBeneficiario: string;
  readonly carteira: string;
  readonly vencimento: CalendarDate | null;
  readonly valorCentavos: number;
  readonly fator: string;
}

/** The whole boleto: campo livre, barcode, linha digitável, printed nosso número. */
export function gerarBoleto(input: BoletoInput): Boleto {
  if (!input?.dados) fail("CAMPO_OBRIGATORIO", "dados bancários are required", "dados");
  const bank = getBank(input.dados.banco, "dados.banco");
  const valor = assertValorCentavos(input.valorCentavos, "valorCentavos");
  if (bank.valorMaximoCentavos !== undefined && valor > bank.valorMaximoCentavos)
    fail("VALOR_ACIMA_DO_LIMITE", `bank ${bank.code} accepts at most ${bank.valorMaximoCentavos} cents`, "valorCentavos", {
      max: bank.valorMaximoCentavos,
    });
  let cl: CampoLivre;
  try {
    cl = campoLivre(input.dados, valor);
  } catch (e) {
    if (e instanceof Error && "field" in e) {
      const ce = e as import("./errors.js").CobrancaError;
      fail(
        ce.code,
        ce.message.replace(/^[A-Z_]+(?: \([^)]*\))?: /, ""),
        ce.field ? `dados.${ce.field}` : "dados",
        ce.details ? { ...ce.details } : undefined,
      );
    }
    throw e;
  }
  const { variant } = selectVariant(input.dados);
  const values = cl.valores;
  const codigoBarras = buildBarcode({ banco: bank.code, vencimento: input.vencimento, valorCentavos: valor, campoLivre: cl.campoLivre });
  const linha = barcodeToLinha(codigoBarras);
  return {
    banco: bank.code,
    bancoComDv: bank.codeWithDv,
    variante: cl.variante,
    codigoBarras,
    linhaDigitavel: linha,
    linhaDigitavelFormatada: formatLinha(linha),
    campoLivre: cl.campoLivre,
    nossoNumero: cl.completo,
    nossoNumeroImpresso: cl.impresso,
    agenciaCodigoBeneficiario: fillTemplate(variant.agenciaCodigoImpresso, values),
    carteira: fillTemplate(variant.carteiraImpressa, values),
    vencimento: input.vencimento,
    valorCentavos: valor,
    fator: codigoBarras.slice(5, 9),
  };
}

/**
 * Read a campo livre back into the bank's fields for one variant (or the first variant whose check
 * digits all agree). Returns null when no variant fits.
 */
export function decodeCampoLivre(
  banco: string,
  cl: string,
  opts: { variante?: string; valorCentavos?: number } = {},
): { variante: string; valores: Record<string, string>; nossoNumero: string } | null {
  const bank = getBank(banco);
  if (!/^\d{25}$/.test(cl)) fail("CAMPO_INVALIDO", "campo livre must be 25 digits", "campoLivre");
  // Without a hint, prefer the variants with the most fixed digits (BB's "000000…" and "…21" layouts).
  const candidates = opts.variante
    ? bank.variants.filter((v) => v.id === opts.variante)
    : [...bank.variants].sort((a, b) => constDigits(b) - constDigits(a));
  for (const v of candidates) {
    const got = readSegments(v, cl);
    if (!got) continue;
    // Re-render from the recovered inputs and compare: proves every DV in the campo livre.
    const inputs: Record<string, string> = { banco };
    for (const name of Object.keys(v.inputs)) {
      const val = got.get(name);
      if (val !== undefined) inputs[name] = val;
    }
    for (const valor of opts.valorCentavos !== undefined ? [opts.valorCentavos] : [1, 0]) {
      try {
        const again = campoLivre({ ...(inputs as unknown as DadosBancarios), variante: v.id }, valor);
        if (again.campoLivre === cl) return { variante: v.id, valores: { ...again.valores }, nossoNumero: again.completo };
      } catch {
        // inputs out of this variant's domain: try the next
      }
    }
  }
  return null;
}

function constDigits(v: BankVariant): number {
  return v.campoLivre.reduce((n, s) => n + ("const" in s ? s.const.length : 0), 0);
}

function segLen(v: BankVariant, s: Segment): number {
  if ("field" in s) return fieldLen(v, s.field);
  if ("const" in s) return s.const.length;
  if ("slice" in s) return s.len;
  if ("dvPrevious" in s) return s.len;
  return 1;
}

function fieldLen(v: BankVariant, name: string): number {
  const spec = v.inputs[name];
  if (spec) return spec.len;
  const d = v.derive.find((x) => x.name === name);
  if (!d) throw new Error(`unknown field ${name} in ${v.id}`);
  if ("concat" in d) return d.concat.reduce((n, c) => n + fieldLen(v, c), 0);
  if ("slice" in d) return d.len;
  if ("const" in d) return d.const.length;
  return d.dv === "banrisulNC" ? 2 : 1;
}

function readSegments(v: BankVariant, cl: string): Map<string, string> | null {
  const values = new Map<string, string>();
  const partial = new Map<string, string[]>();
  let pos = 0;
  for (const s of v.campoLivre) {
    const len = segLen(v, s);
    const part = cl.slice(pos, pos + len);
    if ("field" in s) values.set(s.field, part);
    else if ("const" in s) {
      if (part !== s.const) return null;
    } else if ("slice" in s) {
      const arr = partial.get(s.slice) ?? Array<string>(fieldLen(v, s.slice)).fill("?");
      for (let i = 0; i < len; i++) arr[s.start + i] = part[i]!;
      partial.set(s.slice, arr);
    }
    pos += len;
  }
  for (const [k, arr] of partial) values.set(k, arr.join(""));
  // split concatenations back into their inputs
  for (const d of [...v.derive].reverse()) {
    if (!("concat" in d)) continue;
    const whole = values.get(d.name);
    if (whole === undefined) continue;
    let p = 0;
    for (const c of d.concat) {
      const l = fieldLen(v, c);
      if (!values.has(c)) values.set(c, whole.slice(p, p + l));
      p += l;
    }
  }
  return values;
}

/** Decode a barcode/linha and the bank fields inside its campo livre. */
export function lerBoleto(codigo: string, opts: { referenceDate?: CalendarDate; variante?: string } = {}) {
  const digits = codigo.replace(/[\s.-]/g, "");
  const bc = parseBarcode(digits.length === 47 ? linhaToBarcode(digits) : digits, opts);
  const bank = BANKS[bc.banco];
  const dados = bank
    ? decodeCampoLivre(bc.banco, bc.campoLivre, { ...(opts.variante ? { variante: opts.variante } : {}), valorCentavos: bc.valorCentavos })
    : null;
  return { ...bc, linhaDigitavel: barcodeToLinha(bc.barcode), dados };
}
