/**
 * Fixed-width records described as data. A layout is a list of fields that tiles the record exactly
 * (1-based inclusive positions, as in the bank manuals). The same table writes and reads.
 */
import { type CalendarDate, assertDate, formatDDMMAA, formatDDMMAAAA, parseDDMMAA, parseDDMMAAAA } from "../date.js";
import { CobrancaError, fail } from "../errors.js";
import { cnabText } from "../text.js";

export type FieldFormat =
  /** digits as given (string or non-negative integer) */
  | "digits"
  /** integer cents (or a rate × 100) */
  | "cents"
  /** CalendarDate → DDMMAAAA */
  | "date8"
  /** CalendarDate → DDMMAA */
  | "date6"
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
  return defineRecord(name, base.length, out.sort((a, b) => a.start - b.start));
}

// Layout paths are few and fixed, records are many: split each path once per process.
const splitPaths = new Map<string, readonly string[]>();
function keysOf(path: string): readonly string[] {
  let keys = splitPaths.get(path);
  if (!keys) {
    keys = path.split(".");
    splitPaths.set(path, keys);
  }
  return keys;
}

export function getPath(ctx: unknown, path: string): unknown {
  let cur: unknown = ctx;
  for (const k of keysOf(path)) {
    if (cur === null || cur === undefined || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string, v: unknown): void {
  const keys = keysOf(path);
  let cur = obj;
  for (let i = 0; i < keys.length - 1; i++) {
    const k = keys[i]!;
    if (typeof cur[k] !== "object" || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]!] = v;
}

function fillTpl(tpl: string, ctx: unknown, field: string, warnings: Warning[]): string {
  return tpl.replace(/\{([\w.]+)(?:([:<])(\d+))?\}/g, (_, path: string, op?: string, n?: string) => {
    const v = getPath(ctx, path);
    const s = v === undefined || v === null ? "" : String(v);
    if (n === undefined) return s;
    if (op === "<") {
      // text cut to n characters: declared in the layout, reported as a warning
      const t = cnabText(s, field);
      if (t.length > Number(n)) warnings.push({ code: "TEXTO_TRUNCADO", field, message: `${JSON.stringify(t)} cut to ${n} chars` });
      return t.slice(0, Number(n));
    }
    if (!/^\d*$/.test(s)) fail("CAMPO_INVALIDO", `${path} must be digits`, field);
    if (s.replace(/^0+(?=\d)/, "").length > Number(n)) fail("CAMPO_EXCEDE_TAMANHO", `${path} does not fit ${n} digits`, field);
    return s.replace(/^0+(?=\d)/, "").padStart(Number(n), "0").slice(-Number(n));
  });
}

/** Encode one record. `path` prefixes error fields (e.g. "titulos[3]"). */
export function encodeRecord(layout: RecordLayout, ctx: unknown, warnings: Warning[] = [], path = layout.name): string {
  let out = "";
  for (const f of layout.fields) {
    const width = f.end - f.start + 1;
    const rel = f.src ?? f.name;
    const where = path ? `${path}.${rel}` : rel;
    let s: string;
    if (f.value !== undefined) s = f.value;
    else if (f.fmt === "template") s = fillTpl(f.tpl ?? "", ctx, where, warnings);
    else {
      const v = f.src ? getPath(ctx, f.src) : undefined;
      if (v === undefined || v === null || v === "") s = f.default ?? "";
      else s = formatValue(f, v, where);
    }
    if (f.kind === "N") {
      if (!/^\d*$/.test(s)) fail("CAMPO_INVALIDO", `${f.name} must be numeric, got ${JSON.stringify(s)}`, where);
      if (s.length > width) {
        const t = s.replace(/^0+(?=\d)/, "");
        if (t.length > width) fail("CAMPO_EXCEDE_TAMANHO", `${f.name} (${t.length} digits) does not fit ${width} positions ${f.start}–${f.end}`, where, { max: width });
        s = t;
      }
      s = s.padStart(width, "0");
    } else {
      if (!/^[\x20-\x7e]*$/.test(s)) fail("TEXTO_NAO_CONVERSIVEL", `${f.name} has non-ASCII characters`, where);
      if (s.length > width) {
        if (!f.truncate) fail("CAMPO_EXCEDE_TAMANHO", `${f.name} (${s.length} chars) does not fit ${width} positions ${f.start}–${f.end}`, where, { max: width });
        warnings.push({ code: "TEXTO_TRUNCADO", field: where, message: `${JSON.stringify(s)} cut to ${width} chars` });
        s = s.slice(0, width);
      }
      s = f.align === "right" ? s.padStart(width, " ") : s.padEnd(width, " ");
    }
    out += s;
  }
  if (out.length !== layout.length) throw new Error(`layout ${layout.name} produced ${out.length} chars`);
  return out;
}

function formatValue(f: FieldDef, v: unknown, where: string): string {
  switch (f.fmt ?? (f.kind === "N" ? "digits" : "text")) {
    case "digits":
      if (typeof v === "number") {
        if (!Number.isSafeInteger(v) || v < 0) fail("CAMPO_INVALIDO", `${f.name} must be a non-negative integer`, where);
        return String(v);
      }
      if (typeof v !== "string" || !/^\d+$/.test(v)) fail("CAMPO_INVALIDO", `${f.name} must be digits, got ${JSON.stringify(v)}`, where);
      return v;
    case "cents":
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) fail("VALOR_INVALIDO", `${f.name} must be integer cents ≥ 0`, where);
      return String(v);
    case "date8":
      return formatDDMMAAAA(assertDate(v as CalendarDate, where));
    case "date6": {
      const d = assertDate(v as CalendarDate, where);
      if (d.year < 2000 || d.year > 2079) fail("DATA_FORA_DO_INTERVALO", "CNAB 400 dates are 2000–2079", where);
      return formatDDMMAA(d);
    }
    case "text":
      return cnabText(String(v), where);
    case "raw":
      return String(v);
    case "template":
      return "";
  }
}

export interface DecodedRecord {
  readonly layout: string;
  /** Values at their `src` paths, typed by format. */
  readonly data: Record<string, unknown>;
  /** Every field's raw slice by field name. */
  readonly raw: Record<string, string>;
}

export function decodeRecord(layout: RecordLayout, line: string, warnings: Warning[] = [], lineNo = 0): DecodedRecord {
  if (line.length !== layout.length) fail("CNAB_ESTRUTURA_INVALIDA", `line ${lineNo}: ${line.length} chars, layout ${layout.name} has ${layout.length}`, `linha ${lineNo}`);
  const data: Record<string, unknown> = {};
  const raw: Record<string, string> = {};
  for (const f of layout.fields) {
    const s = line.slice(f.start - 1, f.end);
    raw[f.name] = s;
    if (f.value !== undefined && f.value !== "") {
      const want = f.kind === "N" ? f.value.padStart(s.length, "0") : f.value.padEnd(s.length, " ");
      if (s !== want) warnings.push({ code: "CONSTANTE_DIFERENTE", field: `linha ${lineNo}.${f.name}`, message: `expected ${JSON.stringify(want)}, found ${JSON.stringify(s)}` });
      continue;
    }
    if (!f.src) continue;
    try {
      const v = parseValue(f, s, `linha ${lineNo}.${f.name}`);
      if (v !== undefined) setPath(data, f.src, v);
    } catch (e) {
      if (e instanceof CobrancaError) warnings.push({ code: e.code, field: `linha ${lineNo}.${f.name}`, message: e.message });
      else throw e;
    }
  }
  return { layout: layout.name, data, raw };
}

function parseValue(f: FieldDef, s: string, where: string): unknown {
  const fmt = f.fmt ?? (f.kind === "N" ? "digits" : "text");
  switch (fmt) {
    case "digits":
      return s.trim() === "" ? undefined : s.trim();
    case "cents": {
      const t = s.trim();
      if (t === "") return undefined;
      if (!/^\d+$/.test(t)) fail("CAMPO_INVALIDO", `not numeric: ${JSON.stringify(s)}`, where);
      return Number(t);
    }
    case "date8":
      return parseDDMMAAAA(s, where);
    case "date6":
      return parseDDMMAA(s, where);
    case "text":
    case "raw": {
      const t = f.align === "right" ? s.trim() : s.trimEnd();
      return t === "" ? undefined : t;
    }
    case "template": {
      const t = s.trim();
      return t === "" ? undefined : t;
    }
  }
}

/** Shorthands for layout tables. */
export const N = (name: string, start: number, end: number, extra: Partial<FieldDef> = {}): FieldDef => ({ name, start, end, kind: "N", ...extra });
export const A = (name: string, start: number, end: number, extra: Partial<FieldDef> = {}): FieldDef => ({ name, start, end, kind: "A", ...extra });
/** Blank filler. */
export const B = (start: number, end: number): FieldDef => ({ name: `brancos_${start}`, start, end, kind: "A", value: "" });
/** Zero filler. */
export const Z = (start: number, end: number): FieldDef => ({ name: `zeros_${start}`, start, end, kind: "N", value: "" });
/** Constant. */
export const K = (name: string, start: number, end: number, value: string, kind: "N" | "A" = "A"): FieldDef => ({ name, start, end, kind, value });
