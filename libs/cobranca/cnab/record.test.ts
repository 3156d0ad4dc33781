/**
 * The layouts are compiled once into per-field readers and writers (record.ts). These properties check
 * the compiled readers against the plain reading of the table (slice, then date.ts / Number), field by
 * field, over every layout and every golden line (as found and with characters changed), and that the
 * writers name the field at fault with the record's path only when a field fails or is cut.
 */
import { describe, expect, it } from "vitest";
import { type CalendarDate, date, parseAAAAMMDD, parseDDMMAA, parseDDMMAAAA } from "../date.js";
import { CobrancaError } from "../errors.js";
import { allFixtures, fixtureText } from "../testing/fixtures.js";
import { prng } from "../testing/prng.js";
import * as L240 from "./layouts240.js";
import * as L400 from "./layouts400.js";
import * as LDCB from "./layouts-dcb.js";
import { type FieldDef, type RecordLayout, type Warning, decodeData, decodeRecord, encodeRecord } from "./record.js";

const isLayout = (v: unknown): v is RecordLayout => typeof v === "object" && v !== null && "fields" in v && "length" in v;
const LAYOUTS: RecordLayout[] = [
  ...[...Object.values(L240), ...Object.values(L400), ...Object.values(LDCB)].filter(isLayout),
  ...Object.values(L240.SEGMENTO_T_POR_BANCO),
  ...["001", "104", "033", "756", "748", "237", "085"].flatMap((b) =>
    (["headerArquivo", "headerLote", "P", "Q", "R", "trailerLote", "trailerArquivo"] as const).map((r) =>
      L240.layout240(L240.profile240(b), r),
    ),
  ),
];

const LINES = allFixtures().flatMap((f) =>
  fixtureText(f)
    .split(/\r?\n/)
    .filter((l) => l.length > 0),
);

/** What one field reads as, by the table alone: undefined for blank, a warning's code for a bad value. */
function expected(f: FieldDef, s: string): unknown {
  try {
    switch (f.fmt ?? (f.kind === "N" ? "digits" : "text")) {
      case "cents":
        if (s.trim() === "") return undefined;
        if (!/^\d+$/.test(s.trim())) return "CAMPO_INVALIDO";
        return Number(s.trim());
      case "date8":
        return parseDDMMAAAA(s);
      case "date6":
        return parseDDMMAA(s);
      case "dateYmd8":
        return parseAAAAMMDD(s);
      case "text":
      case "raw":
        return (f.align === "right" ? s.trim() : s.trimEnd()) || undefined;
      default:
        return s.trim() || undefined;
    }
  } catch (e) {
    if (e instanceof CobrancaError) return e.code;
    throw e;
  }
}

const at = (data: Record<string, unknown>, path: string) =>
  path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], data);

function checkLine(layout: RecordLayout, line: string) {
  const warnings: Warning[] = [];
  const data = decodeData(layout, line, warnings, 7);
  const byField = new Map(warnings.map((w) => [w.field, w.code]));
  const want = new Map<string, unknown>(); // by src: the last field there with a value wins
  for (const f of layout.fields) {
    const s = line.slice(f.start - 1, f.end);
    const where = `linha 7.${f.name}`;
    if (f.value) {
      const constant = f.kind === "N" ? f.value.padStart(s.length, "0") : f.value.padEnd(s.length, " ");
      expect(byField.get(where), where).toBe(s === constant ? undefined : "CONSTANTE_DIFERENTE");
    } else if (f.src) {
      const v = expected(f, s);
      if (typeof v === "string" && byField.has(where)) expect(byField.get(where), `${where} ${JSON.stringify(s)}`).toBe(v);
      else {
        expect(byField.has(where), `${where} ${JSON.stringify(s)}`).toBe(false);
        if (v !== undefined) want.set(f.src, v);
        else if (!want.has(f.src)) want.set(f.src, undefined);
      }
    }
  }
  for (const [src, v] of want) expect(at(data, src), `${layout.name} ${src}`).toEqual(v);
  // the record reader gives the same data, plus every field's slice
  const rec = decodeRecord(layout, line, [], 7);
  expect(rec.data).toEqual(data);
  expect(layout.fields.map((f) => rec.raw[f.name]).join("")).toBe(line);
}

describe("compiled readers read what the table says", () => {
  it("every layout, every golden line of its length", () => {
    let checked = 0;
    for (const layout of LAYOUTS)
      for (const line of LINES)
        if (line.length === layout.length) {
          checkLine(layout, line);
          checked++;
        }
    expect(checked).toBeGreaterThan(500);
  });

  it("every layout, golden lines with characters changed (blanks, zeros, letters, impossible dates)", () => {
    const r = prng(2407);
    for (const layout of LAYOUTS)
      for (let n = 0; n < 100; n++) {
        const same = LINES.filter((l) => l.length === layout.length);
        let line = r.pick(same);
        for (let k = r.int(1, 12); k > 0; k--) {
          const p = r.int(0, line.length - 1);
          line = line.slice(0, p) + r.pick(["0", "9", " ", "A", "3", "1", "-"]) + line.slice(p + 1);
        }
        // and the numbers and dates: any digits, across the DDMMAA pivot and past the last day of the month
        for (const f of layout.fields.filter((x) => x.fmt === "date6" || x.fmt === "date8" || x.fmt === "dateYmd8" || x.fmt === "cents"))
          if (r.next() < 0.5) line = line.slice(0, f.start - 1) + r.digits(f.end - f.start + 1) + line.slice(f.end);
        checkLine(layout, line);
      }
  });

  it("a line of the wrong length is a structural error, before any field", () => {
    const w: Warning[] = [];
    expect(() => decodeData(L240.SEGMENTO_U, "3".repeat(239), w, 4)).toThrow(
      expect.objectContaining({ code: "CNAB_ESTRUTURA_INVALIDA", field: "linha 4" }),
    );
    expect(w).toEqual([]);
  });
});

describe("compiled writers name the field at fault with the record's path", () => {
  const bb = L240.layout240(L240.profile240("001"), "Q");
  const ctx = (nome: string, cep: unknown) => ({
    banco: "001",
    lote: { numero: 1 },
    seq: 3,
    titulo: { movimento: "01" },
    pagador: { tipoInscricao: "1", documento: "52998224725", nome, cep },
  });

  it("a cut text warns under the path given, the layout name by default, or the field alone", () => {
    for (const [path, field] of [
      ["titulos[3]", "titulos[3].pagador.nome"],
      ["", "pagador.nome"],
      [undefined, `${bb.name}.pagador.nome`],
    ] as const) {
      const w: Warning[] = [];
      const out = encodeRecord(bb, ctx("X".repeat(41), "01001000"), w, path);
      expect(out).toHaveLength(240);
      expect(out.slice(33, 73)).toBe("X".repeat(40));
      expect(w).toEqual([{ code: "TEXTO_TRUNCADO", field, message: `${JSON.stringify("X".repeat(41))} cut to 40 chars` }]);
    }
  });

  it("a bad value fails under the same path, and the same record written again is identical", () => {
    expect(() => encodeRecord(bb, ctx("ANA", "0100100A"), [], "titulos[9]")).toThrow(
      expect.objectContaining({ code: "CAMPO_INVALIDO", field: "titulos[9].pagador.cep" }),
    );
    expect(() => encodeRecord(bb, ctx("ANA", 1.5), [], "")).toThrow(
      expect.objectContaining({ code: "CAMPO_INVALIDO", field: "pagador.cep" }),
    );
    expect(() => encodeRecord(bb, ctx("李", "01001000"))).toThrow(
      expect.objectContaining({ code: "TEXTO_NAO_CONVERSIVEL", field: `${bb.name}.pagador.nome` }),
    );
    expect(encodeRecord(bb, ctx("Ana Conceição", "01001000"))).toBe(encodeRecord(bb, ctx("ANA CONCEICAO", 1001000)));
  });

  it("dates are written from valid calendar dates only, the field named when not", () => {
    const p = L240.SEGMENTO_P;
    const titulo = (vencimento: unknown) => ({
      titulo: { movimento: "01", vencimento, emissao: date(2026, 1, 2), valorCentavos: 1, id: "x", numeroDocumento: "1" },
      beneficiario: { agencia: "1", conta: "1" },
      seq: 1,
      lote: { numero: 1 },
      banco: "001",
    });
    expect(encodeRecord(p, titulo(date(2026, 2, 28)), [], "").slice(77, 85)).toBe("28022026");
    expect(() => encodeRecord(p, titulo({ year: 2026, month: 2, day: 29 } satisfies CalendarDate), [], "titulos[1]")).toThrow(
      expect.objectContaining({ code: "DATA_INVALIDA", field: "titulos[1].titulo.vencimento" }),
    );
  });
});
