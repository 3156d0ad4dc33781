/**
 * Standalone structural checker for CNAB 240/400 files (cobranca.md §4.4 with the errata). Writers run
 * it before returning; tests run it over every golden file. It needs no layout tables: only the
 * structural positions every file shares.
 *
 * Character set (decision 0025): positions count bytes, one byte a character. A remessa (what we write)
 * must be printable ASCII; a retorno (the bank's file) may also carry Latin-1 letters (A0–FF), read one
 * byte a character. A UTF-8 multi-byte character is refused by its line and column: it shifts every
 * position after it.
 */
import { Buffer } from "node:buffer";
import { CobrancaError } from "../errors.js";

export type Severity = "error" | "warning";

export interface Finding {
  readonly severity: Severity;
  /** Stable rule id, e.g. "LINE_LENGTH", "SEQUENCE", "TRAILER_LOTE_COUNT". */
  readonly rule: string;
  /** 1-based line number (0 = the file as a whole). */
  readonly line: number;
  readonly message: string;
}

export interface CheckResult {
  readonly ok: boolean;
  readonly layout: 240 | 400 | undefined;
  readonly direction: "remessa" | "retorno" | undefined;
  readonly banco: string | undefined;
  readonly lines: readonly string[];
  readonly eol: "CRLF" | "LF" | "mixed" | "none";
  readonly finalNewline: boolean;
  readonly errors: readonly Finding[];
  readonly warnings: readonly Finding[];
}

export interface SplitFile {
  readonly lines: string[];
  readonly eol: "CRLF" | "LF" | "mixed" | "none";
  readonly finalNewline: boolean;
  /** The file ended with the DOS end-of-file byte (1A) after its last record, as BNB's manual asks. */
  readonly fimDeArquivo: boolean;
}

/**
 * Split on LF, strip one CR per line, keep a final unterminated record. Bytes are read as ISO-8859-1, each
 * byte the character of the same code (not windows-1252, which TextDecoder("latin1") is).
 */
export function splitLines(content: string | Uint8Array): SplitFile {
  const raw =
    typeof content === "string" ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("latin1");
  const fimDeArquivo = raw.endsWith("\x1a");
  const text = fimDeArquivo ? raw.slice(0, -1) : raw;
  const parts = text.split("\n");
  const finalNewline = parts.length > 1 && parts[parts.length - 1] === "";
  if (finalNewline) parts.pop();
  let crlf = 0;
  let lf = 0;
  const lines = parts.map((p, i) => {
    const terminated = i < parts.length - 1 || finalNewline;
    if (p.endsWith("\r")) {
      if (terminated) crlf++;
      return p.slice(0, -1);
    }
    if (terminated) lf++;
    return p;
  });
  const eol = crlf && lf ? "mixed" : crlf ? "CRLF" : lf ? "LF" : "none";
  return { lines, eol, finalNewline, fimDeArquivo };
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Printable ASCII and the Latin-1 letters and signs (A0–FF): what a retorno may hold. */
const PRINTABLE_LATIN1 = /^[\x20-\x7e\xa0-\xff]*$/;
/** A lead byte and its continuation bytes, read as ISO-8859-1: a UTF-8 encoded character. */
const UTF8_SEQUENCE = /[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}/;
const UTF8_SEQUENCES = new RegExp(UTF8_SEQUENCE.source, "g");

/** The characters of a line whose UTF-8 characters count one each (the length its author meant). */
function charactersIn(l: string): number {
  let n = l.length;
  for (const m of l.matchAll(UTF8_SEQUENCES)) n -= m[0].length - 1;
  return n;
}

const codeOf = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** What is wrong with the characters of a line that is not all printable ASCII, naming the first column at fault. */
function charsetProblem(l: string, retorno: boolean): { rule: string; message: string } | undefined {
  const utf8 = UTF8_SEQUENCE.exec(l);
  if (utf8) {
    const bytes = [...utf8[0]].map((c) => c.charCodeAt(0));
    const decoded = new TextDecoder().decode(new Uint8Array(bytes));
    const hex = bytes.map((b) => b.toString(16).toUpperCase()).join(" ");
    return {
      rule: "UTF8",
      message:
        `column ${utf8.index + 1}: ${JSON.stringify(decoded)} encoded in UTF-8 (bytes ${hex}); CNAB files are one byte a ` +
        `character (ASCII, or Latin-1 in a retorno), and its extra bytes shift every position after it`,
    };
  }
  if (retorno && PRINTABLE_LATIN1.test(l)) return undefined;
  const allowed = retorno ? PRINTABLE_LATIN1 : PRINTABLE_ASCII;
  let at = 0;
  while (allowed.test(l[at]!)) at++;
  const c = l[at]!;
  const code = c.charCodeAt(0);
  const what =
    code < 0x20 || (code >= 0x7f && code < 0xa0)
      ? `control character ${codeOf(c)}`
      : retorno
        ? `${JSON.stringify(c)} (${codeOf(c)}), not a Latin-1 character`
        : `${JSON.stringify(c)} (${codeOf(c)}), not ASCII: a remessa is written in ASCII upper case, accents removed`;
  return { rule: retorno ? "NOT_LATIN1" : "NOT_ASCII", message: `column ${at + 1}: ${what}` };
}

const num = (s: string) => (/^\d+$/.test(s) ? Number(s) : NaN);

/** num(l.slice(from, to)) for the per-record fields, without cutting a string out of every record. */
function numEm(l: string, from: number, to: number): number {
  if (to <= from || to > l.length) return num(l.slice(from, to));
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = l.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    n = n * 10 + c;
  }
  return n;
}

export function checkCnab(content: string | Uint8Array): CheckResult {
  const { lines, eol, finalNewline } = splitLines(content);
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const err = (rule: string, line: number, message: string) => errors.push({ severity: "error", rule, line, message });
  const warn = (rule: string, line: number, message: string) => warnings.push({ severity: "warning", rule, line, message });
  const done = (layout: 240 | 400 | undefined, direction: "remessa" | "retorno" | undefined, banco: string | undefined): CheckResult => ({
    ok: errors.length === 0,
    layout,
    direction,
    banco,
    lines,
    eol,
    finalNewline,
    errors,
    warnings,
  });

  if (lines.length === 0) {
    err("EMPTY", 0, "empty file");
    return done(undefined, undefined, undefined);
  }
  if (eol === "mixed") warn("EOL_MIXED", 0, "mixed CRLF and LF line endings");
  // 1. line shape and character set (the direction flag sits at the same place in every line-1 shape)
  const first = lines[0]!;
  const len = PRINTABLE_ASCII.test(first) ? first.length : charactersIn(first);
  const retorno = (len === 240 ? first[142] : first[1]) === "2";
  if (len !== 240 && len !== 400 && len !== 444) err("LINE_LENGTH", 1, `first line has ${len} characters (240, 400 or 444 expected)`);
  lines.forEach((l, i) => {
    if (PRINTABLE_ASCII.test(l)) {
      if (l.length !== len) err("LINE_LENGTH", i + 1, `${l.length} characters, expected ${len}`);
      return;
    }
    const charset = charsetProblem(l, retorno);
    // a UTF-8 line is one byte longer per accent: its length says nothing more
    if (charset?.rule !== "UTF8" && l.length !== len) err("LINE_LENGTH", i + 1, `${l.length} characters, expected ${len}`);
    if (charset) err(charset.rule, i + 1, charset.message);
  });
  if (errors.length) return done(undefined, undefined, undefined);
  if (len === 400 && first.startsWith("DCB")) return checkDcb(lines, err, warn, done);
  return len === 240 ? check240(lines, err, warn, done) : check400(lines, err, warn, done);
}

type Report = (rule: string, line: number, message: string) => void;
type Done = (layout: 240 | 400 | undefined, direction: "remessa" | "retorno" | undefined, banco: string | undefined) => CheckResult;

function check240(lines: string[], err: Report, warn: Report, done: Done): CheckResult {
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  const banco = first.slice(0, 3);
  // 2. header and trailer
  if (first[7] !== "0") err("HEADER", 1, "first record must be type 0");
  else if (first.slice(3, 7) !== "0000") warn("LOTE_NUMBER", 1, `header de arquivo with lote ${first.slice(3, 7)}, expected 0000`);
  if (last[7] !== "9") err("TRAILER", lines.length, "last record must be type 9");
  // errata 3: Santander's retorno repeats its lote number on every line, the file trailer included
  else if (last.slice(3, 7) !== "9999")
    warn("LOTE_NUMBER", lines.length, `trailer de arquivo with lote ${last.slice(3, 7)}, expected 9999`);
  // 3. bank code on every record (every line has the header's length by now: prefixes compare as slices)
  lines.forEach((l, i) => {
    if (!l.startsWith(banco)) err("BANK_CODE", i + 1, `bank ${l.slice(0, 3)} differs from the header's ${banco}`);
  });
  // 4. direction
  const dirFlag = first[142];
  const direction = dirFlag === "1" ? "remessa" : dirFlag === "2" ? "retorno" : undefined;
  if (!direction) err("DIRECTION", 1, `header position 143 must be 1 (remessa) or 2 (retorno), got ${JSON.stringify(dirFlag)}`);
  const reconcile = direction === "retorno" ? warn : err; // retorno totals do not always reconcile (README, errata)
  // 5–7, 9, 10. lotes
  let loteCount = 0;
  let expectedLote = 1;
  let i = 1;
  while (i < lines.length - 1) {
    const h = lines[i]!;
    if (h[7] !== "1") {
      err("LOTE_STRUCTURE", i + 1, `expected a lote header (type 1), found type ${h[7]}`);
      i++;
      continue;
    }
    loteCount++;
    const lote = h.slice(3, 7);
    if (num(lote) !== expectedLote) warn("LOTE_NUMBER", i + 1, `lote ${lote}, expected ${String(expectedLote).padStart(4, "0")}`);
    expectedLote++;
    const op = h[8];
    if (direction && op !== (direction === "remessa" ? "R" : "T"))
      err("DIRECTION", i + 1, `lote header operation ${JSON.stringify(op)} does not match the file header`);
    const start = i;
    let seq = 0;
    let pCount = 0;
    let pSum = 0;
    let pendingQ = false;
    let pendingU = false;
    i++;
    while (i < lines.length - 1 && lines[i]![7] === "3") {
      const d = lines[i]!;
      if (!d.startsWith(lote, 3)) err("LOTE_NUMBER", i + 1, `detail in lote ${d.slice(3, 7)} inside lote ${lote}`);
      seq++;
      if (numEm(d, 8, 13) !== seq) err("SEQUENCE", i + 1, `segment sequence ${d.slice(8, 13)}, expected ${String(seq).padStart(5, "0")}`);
      const s = d[13];
      if (s === "P") {
        if (pendingQ) err("SEGMENT_PAIRING", i + 1, "P without a Q before the next P");
        pendingQ = true;
        pCount++;
        pSum += numEm(d, 85, 100) || 0;
      } else if (s === "Q") {
        if (!pendingQ && direction === "remessa") err("SEGMENT_PAIRING", i + 1, "Q without a preceding P");
        pendingQ = false;
      } else if (s === "T") {
        if (pendingU) err("SEGMENT_PAIRING", i + 1, "T without a U before the next T");
        pendingU = true;
      } else if (s === "U") {
        if (!pendingU) err("SEGMENT_PAIRING", i + 1, "U without a preceding T");
        pendingU = false;
      }
      i++;
    }
    if (pendingQ) err("SEGMENT_PAIRING", i, "last P of the lote has no Q");
    if (pendingU) err("SEGMENT_PAIRING", i, "last T of the lote has no U");
    const t = lines[i];
    if (t?.[7] !== "5" || i >= lines.length - 1) {
      err("LOTE_STRUCTURE", i + 1, `lote ${lote} is not closed by a type 5 record`);
      continue;
    }
    if (t.slice(3, 7) !== lote) err("LOTE_STRUCTURE", i + 1, `trailer de lote ${t.slice(3, 7)} closes lote ${lote}`);
    const records = i - start + 1;
    if (num(t.slice(17, 23)) !== records)
      reconcile("TRAILER_LOTE_COUNT", i + 1, `trailer de lote says ${t.slice(17, 23)} records, lote has ${records}`);
    if (direction === "remessa" && pCount > 0) {
      const qt = num(t.slice(23, 29));
      const vt = num(t.slice(29, 46));
      if (qt > 0 && qt !== pCount) err("TRAILER_LOTE_TOTALS", i + 1, `cobrança simples count ${qt} ≠ ${pCount} P records`);
      if (vt > 0 && vt !== pSum) err("TRAILER_LOTE_TOTALS", i + 1, `cobrança simples value ${vt} ≠ ${pSum} (sum of P 86–100)`);
    }
    i++;
  }
  if (num(last.slice(17, 23)) !== loteCount)
    reconcile("TRAILER_ARQUIVO_LOTES", lines.length, `trailer says ${last.slice(17, 23)} lotes, file has ${loteCount}`);
  if (num(last.slice(23, 29)) !== lines.length)
    reconcile("TRAILER_ARQUIVO_COUNT", lines.length, `trailer says ${last.slice(23, 29)} records, file has ${lines.length}`);
  return done(240, direction, banco);
}

function check400(lines: string[], err: Report, warn: Report, done: Done): CheckResult {
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  if (first[0] !== "0") err("HEADER", 1, "first record must be type 0");
  if (last[0] !== "9") err("TRAILER", lines.length, "last record must be type 9");
  const banco = first.slice(76, 79);
  if (!/^\d{3}$/.test(banco)) err("BANK_CODE", 1, `header 77–79 must hold the bank code, got ${JSON.stringify(banco)}`);
  const flag = first[1];
  const literal = first.slice(2, 9);
  const direction = flag === "1" ? "remessa" : flag === "2" ? "retorno" : undefined;
  if (!direction) err("DIRECTION", 1, `header position 2 must be 1 or 2, got ${JSON.stringify(flag)}`);
  else if (literal !== (direction === "remessa" ? "REMESSA" : "RETORNO"))
    err("DIRECTION", 1, `literal ${JSON.stringify(literal)} does not match flag ${flag}`);
  // 8. sequence = line number
  lines.forEach((l, i) => {
    const s = l.slice(394, 400);
    if (num(s) !== i + 1) err("SEQUENCE", i + 1, `sequence ${JSON.stringify(s)}, expected ${String(i + 1).padStart(6, "0")}`);
  });
  // 9. amount totals in retorno trailers, per bank (errata 1 and 2); "if non-zero then equal", as warnings
  if (direction === "retorno") {
    const det = lines.filter((l) => l[0] === "1");
    const count = (codes: string[]) => det.filter((l) => codes.includes(l.slice(108, 110))).length;
    const check = (rule: string, got: number, want: number) => {
      if (got > 0 && got !== want) warn(rule, lines.length, `trailer holds ${got}, details give ${want}`);
    };
    if (banco === "341") {
      check("TRAILER_DETALHES", num(last.slice(212, 220)), det.length);
      check(
        "TRAILER_VALOR",
        num(last.slice(220, 234)),
        det.reduce((s, l) => s + (num(l.slice(152, 165)) || 0), 0),
      );
    } else if (banco === "237") {
      check("TRAILER_ENTRADAS", num(last.slice(57, 62)), count(["02"]));
      check("TRAILER_LIQUIDACOES", num(last.slice(86, 91)), count(["06"]));
      check("TRAILER_BAIXAS", num(last.slice(103, 108)), count(["09", "10"]));
    }
  } else if (direction === "remessa") {
    const lastSeq = num(last.slice(394, 400));
    if (lastSeq !== lines.length) err("TRAILER_COUNT", lines.length, `trailer sequence ${lastSeq} ≠ ${lines.length} lines`);
    if (banco === "033") {
      // Santander's remessa trailer: records in the file (2–7) and the títulos' total (8–20)
      const registros = num(last.slice(1, 7));
      if (registros !== lines.length)
        err("TRAILER_COUNT", lines.length, `trailer counts ${registros} records, the file has ${lines.length}`);
      const total = lines.filter((l) => l[0] === "1").reduce((s, l) => s + (num(l.slice(126, 139)) || 0), 0);
      const declared = num(last.slice(7, 20));
      if (declared !== total) err("TRAILER_VALOR", lines.length, `trailer total ${declared}, details give ${total}`);
    } else if (banco === "077") {
      // Inter's remessa trailer: the number of boletos (2–7), one per type-1 record (Manual CNAB400 v1.1 §4.4)
      const boletos = num(last.slice(1, 7));
      const detalhes = lines.filter((l) => l[0] === "1").length;
      if (boletos !== detalhes) err("TRAILER_COUNT", lines.length, `trailer counts ${boletos} boletos, the file has ${detalhes}`);
    }
  }
  return done(400, direction, /^\d{3}$/.test(banco) ? banco : undefined);
}

/**
 * BRB's "DCB" remessa, version 077 (decision 0027): a header (literal DCB, versão 001, arquivo 077, the
 * código do beneficiário, date, time, record count), then records 01 (a título) each optionally followed
 * by one record 02; no sequence column, no trailer. BRB is its only bank.
 */
function checkDcb(lines: string[], err: Report, warn: Report, done: Done): CheckResult {
  const first = lines[0]!;
  if (first.slice(3, 9) !== "001077")
    err(
      "HEADER",
      1,
      `DCB header 4–9 must be versão 001, arquivo 077 (the version whose positions are known), got ${JSON.stringify(first.slice(3, 9))}`,
    );
  const codigo = first.slice(9, 19);
  if (!/^\d{30}$/.test(first.slice(9, 39))) err("HEADER", 1, "DCB header 10–39 (código do beneficiário, date, time, count) must be digits");
  if (first.slice(39).trim() !== "") err("HEADER", 1, "DCB header 40–400 must be blank");
  if (lines.length === 1) err("DCB_RECORDS", 1, "a DCB remessa needs at least one record 01");
  // the manual's own example header counts 6 for its 11 lines: a mismatch is reported, not refused
  const declared = num(first.slice(33, 39));
  if (declared !== lines.length) warn("HEADER_COUNT", 1, `header counts ${first.slice(33, 39)} records, the file has ${lines.length}`);
  let previous = "";
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    const tipo = l.slice(0, 2);
    if (tipo !== "01" && tipo !== "02") err("DCB_RECORDS", i + 1, `record type ${JSON.stringify(tipo)}, expected 01 or 02`);
    else if (tipo === "02" && previous !== "01") err("DCB_RECORDS", i + 1, "record 02 must follow a record 01");
    else if (tipo === "01" && l.slice(5, 15) !== codigo)
      err("BANK_CODE", i + 1, `código do beneficiário ${l.slice(5, 15)} differs from the header's ${codigo}`);
    previous = tipo;
  }
  return done(400, "remessa", "070");
}

/** Throw CNAB_ESTRUTURA_INVALIDA with every finding unless the file passes. */
export function assertCnab(content: string | Uint8Array): CheckResult {
  const r = checkCnab(content);
  if (!r.ok)
    throw new CobrancaError(
      "CNAB_ESTRUTURA_INVALIDA",
      r.errors.map((e) => `line ${e.line} ${e.rule}: ${e.message}`).join("; "),
      undefined,
      { errors: r.errors },
    );
  return r;
}
