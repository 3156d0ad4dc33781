import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { allFixtures, fixture, fixtureText, sha256 } from "../testing/fixtures.js";
import { checkCnab } from "./checker.js";

const SHA: Record<string, string> = Object.fromEntries(
  fixtureText("README.md")
    .split("\n")
    .map((l) => /^([0-9a-f]{64}) {2}(\S+)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[2]!, m[1]!]),
);

describe("golden CNAB files", () => {
  it("are the files of the README, byte-exact (sha256)", () => {
    expect(allFixtures()).toHaveLength(36);
    for (const f of allFixtures()) expect(sha256(fixture(f)), f).toBe(SHA[f]);
  });

  it.each(allFixtures())("%s passes the structural checker", (f) => {
    const r = checkCnab(fixture(f));
    expect(r.errors, JSON.stringify(r.errors)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.layout).toBe(f.includes("/240/") ? 240 : 400);
    expect(r.direction).toBe(f.startsWith("remessa") ? "remessa" : "retorno");
    // warnings only where the README and the errata say the files do not reconcile
    const expectedWarnings: Record<string, string[]> = {
      "retorno/240/laravel-boleto-033-santander.ret": ["LOTE_NUMBER", "TRAILER_LOTE_COUNT"],
      "retorno/400/laravel-boleto-237-bradesco.ret": [],
      "retorno/400/brcobranca-237-CNAB400BRADESCO.RET": [],
      // the manual's example header counts its records 01 (6), not header + records (10) as its layout says
      "remessa/400/brb-manual-v077-exemplo-remessa.rem": ["HEADER_COUNT"],
    };
    expect([...new Set(r.warnings.map((w) => w.rule))].sort()).toEqual(expectedWarnings[f] ?? []);
  });
});

describe("checker rejects broken files", () => {
  const good = fixtureText("remessa/240/brcobranca-756-remessa-bancoob-cnab240.rem");
  const lines = good.split("\r\n").slice(0, -1);
  const join = (ls: string[]) => ls.join("\r\n") + "\r\n";
  const rules = (s: string) => checkCnab(s).errors.map((e) => e.rule);

  it("wrong line length", () => expect(rules(join([...lines.slice(0, 3), lines[3]! + " ", ...lines.slice(4)]))).toContain("LINE_LENGTH"));
  it("non-ASCII in a remessa, even Latin-1: what we write is ASCII (decision 0025)", () => {
    const bad = checkCnab(join([...lines.slice(0, 3), lines[3]!.slice(0, 50) + "É" + lines[3]!.slice(51), ...lines.slice(4)]));
    expect(bad.errors).toEqual([
      {
        severity: "error",
        rule: "NOT_ASCII",
        line: 4,
        message: 'column 51: "É" (U+00C9), not ASCII: a remessa is written in ASCII upper case, accents removed',
      },
    ]);
  });
  it("sequence gap", () => {
    const bad = lines.map((l, i) => (i === 3 ? l.slice(0, 8) + "00003" + l.slice(13) : l));
    expect(rules(join(bad))).toContain("SEQUENCE");
  });
  it("wrong trailer de lote count", () => {
    const bad = lines.map((l, i) => (i === 5 ? l.slice(0, 17) + "000004" + l.slice(23) : l));
    expect(rules(join(bad))).toContain("TRAILER_LOTE_COUNT");
  });
  it("wrong trailer de arquivo counts", () => {
    const bad = lines.map((l, i) => (i === 6 ? l.slice(0, 17) + "000002000006" + l.slice(29) : l));
    expect(rules(join(bad))).toEqual(expect.arrayContaining(["TRAILER_ARQUIVO_LOTES", "TRAILER_ARQUIVO_COUNT"]));
  });
  it("wrong cobrança simples totals", () => {
    const bad = lines.map((l, i) => (i === 5 ? l.slice(0, 29) + "00000000000005001" + l.slice(46) : l));
    expect(rules(join(bad))).toContain("TRAILER_LOTE_TOTALS");
  });
  it("P without Q, missing trailer, other bank", () => {
    expect(rules(join([...lines.slice(0, 3), ...lines.slice(4)]))).toEqual(expect.arrayContaining(["SEGMENT_PAIRING"]));
    expect(rules(join(lines.slice(0, -1)))).toContain("TRAILER");
    expect(rules(join(lines.map((l, i) => (i === 2 ? "001" + l.slice(3) : l))))).toContain("BANK_CODE");
  });
  it("CNAB 400: sequence and direction", () => {
    const f = fixtureText("remessa/400/brcobranca-237-remessa-bradesco-cnab400.rem").split("\r\n").slice(0, -1);
    expect(checkCnab(join(f)).ok).toBe(true);
    expect(checkCnab(join(f.map((l, i) => (i === 1 ? l.slice(0, 394) + "000007" : l)))).errors.map((e) => e.rule)).toContain("SEQUENCE");
    expect(checkCnab(join(f.map((l, i) => (i === 0 ? "02" + l.slice(2) : l)))).errors.map((e) => e.rule)).toContain("DIRECTION");
  });
});

describe("retorno character set (decision 0025)", () => {
  // Sicredi's CNAB 240 retorno: segment T's pagador name at 149–188 on line 3
  const lines = fixtureText("retorno/240/brcobranca-748-CNAB240SICREDI.CRT").split("\n");
  const withT = (text: string) => lines.map((l, i) => (i === 2 ? l.slice(0, 148) + text + l.slice(148 + text.length) : l)).join("\n");
  const latin1 = (s: string) => new Uint8Array(Buffer.from(s, "latin1"));

  it("Latin-1 letters in a CNAB 240 retorno are read one byte a character", () => {
    const r = checkCnab(latin1(withT("JOÃO DA CONCEIÇÃO")));
    expect(r.errors).toEqual([]);
    expect(r.lines[2]!.slice(148, 165)).toBe("JOÃO DA CONCEIÇÃO");
    expect(r.lines[2]).toHaveLength(240);
  });

  it("control characters and C1 bytes (80–9F) are refused by their column", () => {
    const tab = checkCnab(latin1(withT("JOAO\tDA SILVA")));
    expect(tab.errors).toEqual([{ severity: "error", rule: "NOT_LATIN1", line: 3, message: "column 153: control character U+0009" }]);
    const c1 = checkCnab(new Uint8Array([...latin1(withT("JOAO"))].map((b, i) => (i === 241 * 2 + 150 ? 0x96 : b))));
    expect(c1.errors.map((e) => [e.rule, e.message])).toEqual([["NOT_LATIN1", "column 151: control character U+0096"]]);
  });

  it("a text already decoded may hold Latin-1 letters, nothing beyond", () => {
    expect(checkCnab(withT("JOÃO")).errors).toEqual([]);
    expect(checkCnab(withT("JOÃO € ")).errors.map((e) => e.message)).toEqual(['column 154: "€" (U+20AC), not a Latin-1 character']);
  });
});
