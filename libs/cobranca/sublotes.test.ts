import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { date } from "./date.js";
import type { CobrancaError } from "./errors.js";
import { gerarRemessa, type Titulo } from "./cnab/remessa.js";
import { agruparSubLotes, atribuirNsa, maxTitulosPorArquivo, type ItemAgrupavel } from "./sublotes.js";
import { prng } from "./testing/prng.js";

type Item = ItemAgrupavel & { titulo: Titulo };

function items(seed: number, n: number): Item[] {
  const r = prng(seed);
  return Array.from({ length: n }, (_, i) => {
    const banco = r.pick(["237", "341", "001"]);
    return {
      id: `bol-${String(i).padStart(5, "0")}`,
      banco,
      layout: banco === "001" ? 240 : 400,
      convenio: banco === "001" ? "1234567" : r.pick(["111", "222"]),
      carteira: banco === "341" ? "109" : banco === "237" ? r.pick(["09", "06"]) : "17",
      conta: "12345",
      agencia: "1234",
      variacao: banco === "001" ? "019" : undefined,
      pix: r.next() < 0.2,
      nossoNumero: String(i + 1),
      titulo: {
        id: `bol-${String(i).padStart(5, "0")}`,
        nossoNumero: String(i + 1),
        vencimento: date(2026, 12, r.int(1, 28)),
        emissao: date(2026, 11, 29),
        valorCentavos: r.int(1, 1_000_000),
        pagador: { nome: `Cliente ${i}`, documento: "52998224725" },
      },
    } as Item;
  });
}

function shuffle<T>(xs: T[], seed: number): T[] {
  const r = prng(seed);
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

const files = (xs: Item[]) =>
  atribuirNsa(agruparSubLotes(xs, { maxTitulos: 40 }), 100).map((s) => {
    const out = gerarRemessa({
      banco: s.chave.banco,
      layout: s.chave.layout,
      nsa: s.nsa,
      geradoEm: { year: 2026, month: 11, day: 29, hour: 12, minute: 0, second: 0 },
      beneficiario: {
        nome: "Empresa",
        documento: "11222333000181",
        agencia: s.chave.agencia,
        conta: s.chave.conta,
        contaDv: "1",
        agenciaDv: "1",
        convenio: s.chave.convenio,
        carteira: s.chave.carteira,
        variacao: s.chave.variacao,
      },
      titulos: s.itens.map((i) => i.titulo),
    });
    return { id: s.id, nsa: s.nsa, sha256: createHash("sha256").update(out.bytes).digest("hex") };
  });

describe("deterministic sub-batches", () => {
  it("groups by (banco, layout, convênio, carteira, conta, agência, variação, pix)", () => {
    const subs = agruparSubLotes(items(1, 300));
    for (const s of subs) {
      for (const it of s.itens) {
        expect([it.banco, it.layout, it.convenio, it.carteira, it.pix === true]).toEqual([
          s.chave.banco,
          s.chave.layout,
          s.chave.convenio,
          s.chave.carteira,
          s.chave.pix,
        ]);
      }
      expect(s.itens.map((i) => i.id)).toEqual([...s.itens.map((i) => i.id)].sort());
    }
    expect(subs.reduce((n, s) => n + s.itens.length, 0)).toBe(300);
    expect(new Set(subs.map((s) => s.id)).size).toBe(subs.length);
  });

  it("same input in any order → same groups, same bytes, same sha256", () => {
    const xs = items(2, 250);
    const a = files(xs);
    expect(files(shuffle(xs, 9))).toEqual(a);
    expect(files(shuffle(xs, 10))).toEqual(a);
    expect(a.map((f) => f.nsa)).toEqual(a.map((_, i) => 100 + i));
  });

  it("splits by size, keeping the order", () => {
    const xs = items(3, 500).map((x) => ({
      ...x,
      banco: "237",
      layout: 400 as const,
      convenio: "1",
      carteira: "09",
      variacao: undefined,
      pix: false,
    }));
    const subs = agruparSubLotes(xs, { maxTitulos: 120 });
    expect(subs.map((s) => s.itens.length)).toEqual([120, 120, 120, 120, 20]);
    expect(subs.map((s) => `${s.parte}/${s.partes}`)).toEqual(["1/5", "2/5", "3/5", "4/5", "5/5"]);
    expect(subs.flatMap((s) => s.itens.map((i) => i.id))).toEqual(xs.map((x) => x.id).sort());
    expect(maxTitulosPorArquivo(240, 3)).toBe(33333);
    expect(maxTitulosPorArquivo(400, 2)).toBe(499998);
    expect(agruparSubLotes(xs, { maxTitulos: 10_000_000 })).toHaveLength(1);
  });

  it("rejects duplicate ids and duplicate nossos números of one convênio", () => {
    const xs = items(4, 5);
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return [(e as CobrancaError).code, (e as CobrancaError).field];
      }
      return null;
    };
    expect(err(() => agruparSubLotes([...xs, { ...xs[0]!, nossoNumero: "999" }]))).toEqual(["CAMPO_INVALIDO", "itens[5].id"]);
    expect(err(() => agruparSubLotes([...xs, { ...xs[0]!, id: "other" }]))).toEqual(["CAMPO_INVALIDO", "itens[5].nossoNumero"]);
    expect(err(() => agruparSubLotes([{ ...xs[0]!, layout: 500 as 400 }]))).toEqual(["CNAB_LAYOUT_DESCONHECIDO", "itens[0].layout"]);
  });
});
