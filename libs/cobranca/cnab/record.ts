/**
 * Fixed-width records described as data. A layout is a list of fields that tiles the record exactly
 * (1-based inclusive positions, as in the bank manuals). The same table writes and reads.
 */
import {
  type CalendarDate,
  assertDate,
  formatAAAAMMDD,
  formatDDMMAA,
  formatDDMMAAAA,
  isValidDate,
  parseAAAAMMDD,
  parseDDMMAA,
  parseDDMMAAAA,
} from "../date.js";
import { CobrancaError, fail } from "../errors.js";
import { cnabText } from "../text.js";

export type FieldFormat =
  /** digits as given (string or non-negative integer) */
  | "digits"
  /**
   * CPF/CNPJ of a numeric field: digits, or the upper-case letters of an alphanumeric CNPJ (2026), kept
   * and right-aligned zero-filled like the digits, so a numeric document writes the same bytes as before
   */
  | "taxid"
  /**
   * An alphanumeric field that a bank's own files fill like a number (the "número do documento" of
   * FEBRABAN 240, X(15)): text as "text", but an all-digit value right-aligned and zero-filled
   */
  | "docnum"
  /** integer cents (or a rate × 100) */
  | "cents"
  /** CalendarDate → DDMMAAAA */
  | "date8"
  /** CalendarDate → DDMMAA */
  | "date6"
  /** CalendarDate → AAAAMMDD (Sicredi's CNAB 400 retorno) */
  | "dateYmd8"
  /** free text: ASCII-folded, upper-case, punctuation removed (text.ts cnabText) */
  | "text"
  /** value written exactly as given (already upper-case ASCII) */
  | "raw"
  /** `tpl` with {path} / {path:N} (zero-padded to N) placeholders */
  | "template";

export interface FieldDef {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  /** N = numeric, right-aligned, zero-filled. A = alphanumeric, left-aligned, blank-filled. */
  readonly kind: "N" | "A";
  /** A constant written as is (padded per kind); readers report a mismatch as a warning. */
  readonly value?: string;
  /** Dotted path into the record's context (e.g. "titulo.valorCentavos"). */
  readonly src?: string;
  readonly fmt?: FieldFormat;
  readonly tpl?: string;
  /** Text may be cut to the field width: declared here, reported as a warning, never silent. */
  readonly truncate?: boolean;
  /** Used when the context has no value at `src`. */
  readonly default?: string;
  /** Alphanumeric fields are left-aligned unless "right" (blank-filled on the left). */
  readonly align?: "right";
}

export interface RecordLayout {
  readonly name: string;
  readonly length: 240 | 400;
  readonly fields: readonly FieldDef[];
}

export interface Warning {
  readonly code: "TEXTO_TRUNCADO" | "CONSTANTE_DIFERENTE" | string;
  readonly field: string;
  readonly message: string;
}

/** Throws (at definition time) unless the fields tile 1..length exactly, in order, with unique names. */
export function defineRecord(name: string, length: 240 | 400, fields: readonly FieldDef[]): RecordLayout {
  let next = 1;
  const names = new Set<string>();
  for (const f of fields) {
    if (f.start !== next) throw new Error(`layout ${name}: field ${f.name} starts at ${f.start}, expected ${next}`);
    if (f.end < f.start) throw new Error(`layout ${name}: field ${f.name} ends before it starts`);
    if (names.has(f.name)) throw new Error(`layout ${name}: duplicate field ${f.name}`);
    if (f.value !== undefined && f.value.length > f.end - f.start + 1) throw new Error(`layout ${name}: constant of ${f.name} too long`);
    names.add(f.name);
    next = f.end + 1;
  }
  if (next !== length + 1) throw new Error(`layout ${name}: fields end at ${next - 1}, record is ${length}`);
  return { name, length, fields };
}

/**
 * Replace fields of a base layout by others covering exactly the same span(s): a bank's deviation
 * from the FEBRABAN layout is a list of overrides (data), not code.
 */
export function overrideRecord(base: RecordLayout, name: string, overrides: readonly FieldDef[]): RecordLayout {
  const sorted = [...overrides].sort((a, b) => a.start - b.start);
  const out: FieldDef[] = [...sorted];
  for (const f of base.fields) {
    const over = sorted.filter((x) => x.start <= f.end && x.end >= f.start);
    if (over.length === 0) {
      out.push(f);
      continue;
    }
    // parts of a partly covered base field become filler of the same kind
    let pos = f.start;
    for (const x of over) {
      if (x.start > pos) out.push({ name: `${f.name}_${pos}`, start: pos, end: x.start - 1, kind: f.kind, value: "" });
      pos = Math.max(pos, x.end + 1);
    }
    if (pos <= f.end) out.push({ name: `${f.name}_${pos}`, start: pos, end: f.end, kind: f.kind, value: "" });
  }
  return defineRecord(
    name,
    base.length,
    out.sort((a, b) => a.start - b.start),
  );
}

// ------------------------------------------------------------------ compiled layouts
//
// A remessa writes tens of thousands of records and a retorno reads as many, with a handful of layouts:
// each layout is turned once into per-field closures (paths split, constants padded, templates parsed),
// so the per-record work is only what depends on the record. Error and warning field names ("where")
// are not built for every field of every record: only on failure, a warning, or text to fold (which,
// for the detail records, written without a path, is the field's own name).

type Encoder = (ctx: unknown, warnings: Warning[], path: string) => string;
type Decoder = (line: string, data: Record<string, unknown>, warnings: Warning[], lineNo: number) => void;

interface CompiledLayout {
  readonly encoders: readonly Encoder[];
  readonly decoders: readonly Decoder[];
}

const compiled = new WeakMap<RecordLayout, CompiledLayout>();

function compile(layout: RecordLayout): CompiledLayout {
  let c = compiled.get(layout);
  if (!c) {
    c = { encoders: layout.fields.map(compileEncoder), decoders: layout.fields.flatMap(compileDecoder) };
    compiled.set(layout, c);
  }
  return c;
}

const DIGITS = /^\d*$/;
const TAX_ID = /^[0-9A-Z]*$/;
const SOME_DIGITS = /^\d+$/;
const PRINTABLE = /^[\x20-\x7e]*$/;
const LEADING_ZEROS = /^0+(?=\d)/;

/** Error path of a field inside a record: `path` (e.g. "titulos[3]" or a layout name) + the field. */
const whereOf = (path: string, rel: string) => (path ? `${path}.${rel}` : rel);

type Getter = (ctx: unknown) => unknown;

function getter(path: string): Getter {
  const keys = path.split(".");
  return (ctx) => {
    let cur: unknown = ctx;
    for (let i = 0; i < keys.length; i++) {
      if (cur === null || cur === undefined || typeof cur !== "object") return undefined;
      cur = (cur as Record<string, unknown>)[keys[i]!];
    }
    return cur;
  };
}

// Callers outside the layouts (NN check-digit templates, optional records) use a few fixed paths.
const getters = new Map<string, Getter>();
export function getPath(ctx: unknown, path: string): unknown {
  let get = getters.get(path);
  if (!get) {
    get = getter(path);
    getters.set(path, get);
  }
  return get(ctx);
}

function setter(path: string): (obj: Record<string, unknown>, v: unknown) => void {
  const keys = path.split(".");
  const last = keys.pop()!;
  if (keys.length === 0)
    return (obj, v) => {
      obj[last] = v;
    };
  return (obj, v) => {
    let cur = obj;
    for (const k of keys) {
      if (typeof cur[k] !== "object" || cur[k] === null) cur[k] = {};
      cur = cur[k] as Record<string, unknown>;
    }
    cur[last] = v;
  };
}

/** Padding, alignment and the width checks of one field, applied to the formatted text. */
type Fit = (s: string, warnings: Warning[], path: string) => string;

function fitOf(f: FieldDef, rel: string): Fit {
  const width = f.end - f.start + 1;
  if (f.kind === "N") {
    const allowed = f.fmt === "taxid" ? TAX_ID : DIGITS;
    return (s, _warnings, path) => {
      if (!allowed.test(s))
        fail(
          "CAMPO_INVALIDO",
          `${f.name} must be ${f.fmt === "taxid" ? "a CPF/CNPJ (0-9, A-Z)" : "numeric"}, got ${JSON.stringify(s)}`,
          whereOf(path, rel),
        );
      if (s.length > width) {
        const t = s.replace(LEADING_ZEROS, "");
        if (t.length > width)
          fail(
            "CAMPO_EXCEDE_TAMANHO",
            `${f.name} (${t.length} digits) does not fit ${width} positions ${f.start}–${f.end}`,
            whereOf(path, rel),
            { max: width },
          );
        s = t;
      }
      return s.padStart(width, "0");
    };
  }
  const asNumber = f.fmt === "docnum" ? fitOf({ ...f, kind: "N", fmt: "digits" }, rel) : undefined;
  return (s, warnings, path) => {
    if (asNumber && SOME_DIGITS.test(s)) return asNumber(s, warnings, path);
    if (!PRINTABLE.test(s)) fail("TEXTO_NAO_CONVERSIVEL", `${f.name} has non-ASCII characters`, whereOf(path, rel));
    if (s.length > width) {
      if (!f.truncate)
        fail(
          "CAMPO_EXCEDE_TAMANHO",
          `${f.name} (${s.length} chars) does not fit ${width} positions ${f.start}–${f.end}`,
          whereOf(path, rel),
          { max: width },
        );
      warnings.push({ code: "TEXTO_TRUNCADO", field: whereOf(path, rel), message: `${JSON.stringify(s)} cut to ${width} chars` });
      s = s.slice(0, width);
    }
    return f.align === "right" ? s.padStart(width, " ") : s.padEnd(width, " ");
  };
}

/** A fixed text fitted once when that can neither fail nor warn; otherwise at every record, as declared. */
function fixed(s: string, fitTo: Fit): Encoder {
  const probe: Warning[] = [];
  let out: string | undefined;
  try {
    out = fitTo(s, probe, "");
  } catch (e) {
    if (!(e instanceof CobrancaError)) throw e;
  }
  if (out !== undefined && probe.length === 0) {
    const done = out;
    return () => done;
  }
  return (_ctx, warnings, path) => fitTo(s, warnings, path);
}

function compileEncoder(f: FieldDef): Encoder {
  const rel = f.src ?? f.name;
  const fitTo = fitOf(f, rel);
  if (f.value !== undefined) return fixed(f.value, fitTo);
  if (f.fmt === "template") {
    const fill = compileTemplate(f.tpl ?? "", rel);
    return (ctx, warnings, path) => fitTo(fill(ctx, warnings, path), warnings, path);
  }
  const empty = fixed(f.default ?? "", fitTo);
  if (!f.src) return empty;
  const get = getter(f.src);
  const format = formatterOf(f, rel);
  return (ctx, warnings, path) => {
    const v = get(ctx);
    if (v === undefined || v === null || v === "") return empty(ctx, warnings, path);
    return fitTo(format(v, path), warnings, path);
  };
}

type Formatter = (v: unknown, path: string) => string;

function formatterOf(f: FieldDef, rel: string): Formatter {
  switch (f.fmt ?? (f.kind === "N" ? "digits" : "text")) {
    case "digits":
      return (v, path) => {
        if (typeof v === "number") {
          if (!Number.isSafeInteger(v) || v < 0) fail("CAMPO_INVALIDO", `${f.name} must be a non-negative integer`, whereOf(path, rel));
          return String(v);
        }
        if (typeof v !== "string" || !SOME_DIGITS.test(v))
          fail("CAMPO_INVALIDO", `${f.name} must be digits, got ${JSON.stringify(v)}`, whereOf(path, rel));
        return v;
      };
    case "taxid":
      return (v, path) => {
        if (typeof v !== "string" || !/^[0-9A-Z]+$/.test(v))
          fail("CAMPO_INVALIDO", `${f.name} must be a CPF/CNPJ (0-9, A-Z), got ${JSON.stringify(v)}`, whereOf(path, rel));
        return v;
      };
    case "cents":
      return (v, path) => {
        if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
          fail("VALOR_INVALIDO", `${f.name} must be integer cents ≥ 0`, whereOf(path, rel));
        return String(v);
      };
    case "date8":
      return (v, path) =>
        formatDDMMAAAA(isValidDate(v as CalendarDate) ? (v as CalendarDate) : assertDate(v as CalendarDate, whereOf(path, rel)));
    case "dateYmd8":
      return (v, path) =>
        formatAAAAMMDD(isValidDate(v as CalendarDate) ? (v as CalendarDate) : assertDate(v as CalendarDate, whereOf(path, rel)));
    case "date6":
      return (v, path) => {
        const d = isValidDate(v as CalendarDate) ? (v as CalendarDate) : assertDate(v as CalendarDate, whereOf(path, rel));
        if (d.year < 2000 || d.year > 2079) fail("DATA_FORA_DO_INTERVALO", "CNAB 400 dates are 2000–2079", whereOf(path, rel));
        return formatDDMMAA(d);
      };
    case "docnum":
      // the common case, digits, needs no folding
      return (v, path) => (typeof v === "string" && SOME_DIGITS.test(v) ? v : cnabText(String(v), whereOf(path, rel)));
    case "text":
      return (v, path) => cnabText(String(v), whereOf(path, rel));
    case "raw":
      return (v) => String(v);
    case "template":
      return () => "";
  }
}

/** `tpl` parsed once into literal text and placeholders, evaluated left to right as String.replace did. */
function compileTemplate(tpl: string, rel: string): Encoder {
  const parts: (string | Encoder)[] = [];
  let last = 0;
  for (const m of tpl.matchAll(/\{([\w.]+)(?:([:<])(\d+))?\}/g)) {
    if (m.index! > last) parts.push(tpl.slice(last, m.index));
    parts.push(placeholder(m[1]!, m[2], m[3], rel));
    last = m.index! + m[0].length;
  }
  if (last < tpl.length) parts.push(tpl.slice(last));
  return (ctx, warnings, path) => {
    let out = "";
    for (const p of parts) out += typeof p === "string" ? p : p(ctx, warnings, path);
    return out;
  };
}

function placeholder(src: string, op: string | undefined, digits: string | undefined, rel: string): Encoder {
  const get = getter(src);
  const text = (ctx: unknown) => {
    const v = get(ctx);
    return v === undefined || v === null ? "" : String(v);
  };
  if (digits === undefined) return text;
  const n = Number(digits);
  if (op === "<")
    // text cut to n characters: declared in the layout, reported as a warning
    return (ctx, warnings, path) => {
      const t = cnabText(text(ctx), whereOf(path, rel));
      if (t.length > n)
        warnings.push({ code: "TEXTO_TRUNCADO", field: whereOf(path, rel), message: `${JSON.stringify(t)} cut to ${n} chars` });
      return t.slice(0, n);
    };
  return (ctx, _warnings, path) => {
    const s = text(ctx);
    if (!DIGITS.test(s)) fail("CAMPO_INVALIDO", `${src} must be digits`, whereOf(path, rel));
    const t = s.replace(LEADING_ZEROS, "");
    if (t.length > n) fail("CAMPO_EXCEDE_TAMANHO", `${src} does not fit ${n} digits`, whereOf(path, rel));
    return t.padStart(n, "0").slice(-n);
  };
}

/** Encode one record. `path` prefixes error fields (e.g. "titulos[3]"). */
export function encodeRecord(layout: RecordLayout, ctx: unknown, warnings: Warning[] = [], path = layout.name): string {
  const encoders = compile(layout).encoders;
  const parts = new Array<string>(encoders.length);
  for (let i = 0; i < encoders.length; i++) parts[i] = encoders[i]!(ctx, warnings, path);
  // join, not +=: files keep every record until the end, and a flat string there is one object, not
  // a tree of every field's pieces that the garbage collector would have to copy record after record
  const out = parts.join("");
  if (out.length !== layout.length) throw new Error(`layout ${layout.name} produced ${out.length} chars`);
  return out;
}

export interface DecodedRecord {
  readonly layout: string;
  /** Values at their `src` paths, typed by format. */
  readonly data: Record<string, unknown>;
  /** Every field's raw slice by field name. */
  readonly raw: Record<string, string>;
}

export function decodeRecord(layout: RecordLayout, line: string, warnings: Warning[] = [], lineNo = 0): DecodedRecord {
  const data = decodeData(layout, line, warnings, lineNo);
  const raw: Record<string, string> = {};
  for (const f of layout.fields) raw[f.name] = line.slice(f.start - 1, f.end);
  return { layout: layout.name, data, raw };
}

/** The `data` of decodeRecord alone: readers that never look at the raw slices skip building them. */
export function decodeData(layout: RecordLayout, line: string, warnings: Warning[] = [], lineNo = 0): Record<string, unknown> {
  if (line.length !== layout.length)
    fail("CNAB_ESTRUTURA_INVALIDA", `line ${lineNo}: ${line.length} chars, layout ${layout.name} has ${layout.length}`, `linha ${lineNo}`);
  const data: Record<string, unknown> = {};
  for (const decode of compile(layout).decoders) decode(line, data, warnings, lineNo);
  return data;
}

const lineWhere = (lineNo: number, f: FieldDef) => `linha ${lineNo}.${f.name}`;

/** Blank fillers decode to nothing: only constants to check and fields with a `src` get a decoder. */
function compileDecoder(f: FieldDef): Decoder[] {
  const from = f.start - 1;
  const to = f.end;
  if (f.value !== undefined && f.value !== "") {
    const width = f.end - f.start + 1;
    const want = f.kind === "N" ? f.value.padStart(width, "0") : f.value.padEnd(width, " ");
    return [
      (line, _data, warnings, lineNo) => {
        const s = line.slice(from, to);
        if (s !== want)
          warnings.push({
            code: "CONSTANTE_DIFERENTE",
            field: lineWhere(lineNo, f),
            message: `expected ${JSON.stringify(want)}, found ${JSON.stringify(s)}`,
          });
      },
    ];
  }
  if (!f.src) return [];
  const parse = parserOf(f);
  const set = setter(f.src);
  return [
    (line, data, warnings, lineNo) => {
      try {
        const v = parse(line, from, to, lineNo);
        if (v !== undefined) set(data, v);
      } catch (e) {
        if (e instanceof CobrancaError) warnings.push({ code: e.code, field: lineWhere(lineNo, f), message: e.message });
        else throw e;
      }
    },
  ];
}

/** Reads line[from, to): numbers and dates straight from the line, the rest from its slice. */
type Parser = (line: string, from: number, to: number, lineNo: number) => unknown;

/** The number written in line[from, to) when every character there is a digit (at most 15: exact); else -1. */
function numeroEm(line: string, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** A well-formed date at day/month/year offsets of the field, or undefined (blank, zero, invalid: date.ts decides). */
function dataEm(line: string, from: number, to: number, anoDe2: boolean): CalendarDate | undefined {
  if (to - from !== (anoDe2 ? 6 : 8)) return undefined;
  const day = numeroEm(line, from, from + 2);
  const month = numeroEm(line, from + 2, from + 4);
  const ano = numeroEm(line, from + 4, to);
  if (day < 0 || month < 0 || ano < 0) return undefined;
  const d = { year: anoDe2 ? (ano < 80 ? 2000 + ano : 1900 + ano) : ano, month, day };
  return isValidDate(d) ? d : undefined;
}

function parserOf(f: FieldDef): Parser {
  switch (f.fmt ?? (f.kind === "N" ? "digits" : "text")) {
    case "taxid":
    case "docnum":
    case "digits":
      return (line, from, to) => {
        const t = line.slice(from, to).trim();
        return t === "" ? undefined : t;
      };
    case "cents":
      return (line, from, to, lineNo) => {
        const n = numeroEm(line, from, to);
        if (n >= 0) return n;
        const s = line.slice(from, to);
        const t = s.trim();
        if (t === "") return undefined;
        if (!SOME_DIGITS.test(t)) fail("CAMPO_INVALIDO", `not numeric: ${JSON.stringify(s)}`, lineWhere(lineNo, f));
        return Number(t);
      };
    case "date8":
      return (line, from, to, lineNo) => dataEm(line, from, to, false) ?? parseDDMMAAAA(line.slice(from, to), lineWhere(lineNo, f));
    case "date6":
      return (line, from, to, lineNo) => dataEm(line, from, to, true) ?? parseDDMMAA(line.slice(from, to), lineWhere(lineNo, f));
    case "dateYmd8":
      return (line, from, to, lineNo) => parseAAAAMMDD(line.slice(from, to), lineWhere(lineNo, f));
    case "text":
    case "raw": {
      const right = f.align === "right";
      return (line, from, to) => {
        const s = line.slice(from, to);
        const t = right ? s.trim() : s.trimEnd();
        return t === "" ? undefined : t;
      };
    }
    case "template":
      return (line, from, to) => {
        const t = line.slice(from, to).trim();
        return t === "" ? undefined : t;
      };
  }
}

/** Shorthands for layout tables. */
export const N = (name: string, start: number, end: number, extra: Partial<FieldDef> = {}): FieldDef => ({
  name,
  start,
  end,
  kind: "N",
  ...extra,
});
export const A = (name: string, start: number, end: number, extra: Partial<FieldDef> = {}): FieldDef => ({
  name,
  start,
  end,
  kind: "A",
  ...extra,
});
/** Blank filler. */
export const B = (start: number, end: number): FieldDef => ({ name: `brancos_${start}`, start, end, kind: "A", value: "" });
/** Zero filler. */
export const Z = (start: number, end: number): FieldDef => ({ name: `zeros_${start}`, start, end, kind: "N", value: "" });
/** Constant. */
export const K = (name: string, start: number, end: number, value: string, kind: "N" | "A" = "A"): FieldDef => ({
  name,
  start,
  end,
  kind,
  value,
});
