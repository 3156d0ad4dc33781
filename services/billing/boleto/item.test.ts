import { describe, expect, it } from "vitest";
import { CobrancaError } from "../../../libs/cobranca/index.js";
import { prepareItem } from "./item.js";
import { assignItemIds } from "../jobs/item-ids.js";
import { boletoInvalido, boletoValido, INVALIDOS } from "../testing/fixtures.js";
import { RenderFailure, RenderPool } from "./render-pool.js";

const ctx = { itemId: "x", dataProcessamento: { year: 2026, month: 11, day: 29 }, sandbox: false };

describe("prepareItem", () => {
  it("computes barcode, linha and printed nosso número of a valid Bradesco boleto", () => {
    const p = prepareItem(boletoValido(1), ctx);
    expect(p.result.codigoBarras).toMatch(/^237\d{41}$/);
    expect(p.result.linhaDigitavel).toHaveLength(47);
    expect(p.result.nossoNumero).toBe("1001");
    expect(p.result.nossoNumeroFormatado).toContain(p.result.nossoNumeroDv);
  });

  it.each(INVALIDOS.map((x, k) => ({ ...x, k })))("refuses an item with $code", ({ code, k }) => {
    let err: unknown;
    try {
      // CPF check digits are checked by the PDF renderer, so the first case passes here
      const p = prepareItem(boletoInvalido(1, k), ctx);
      expect(code).toBe("CPF_CNPJ_INVALIDO");
      expect(p.ficha.pagador.documento).toBe("12345678900");
      return;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CobrancaError);
    expect((err as CobrancaError).code).toBe(code);
  });
});

describe("assignItemIds", () => {
  it("falls back to seu_numero, numero_documento, then position, and skips repeats", () => {
    const a = boletoValido(1);
    const b = boletoValido(2, { externalId: "", seuNumero: "SN-2" });
    const c = boletoValido(3, { externalId: "", seuNumero: "", numeroDocumento: "bad id/3" });
    const d = boletoValido(4, { externalId: "t-0001" });
    const e = boletoValido(5, { externalId: "../etc" });
    const ids = assignItemIds([a, b, c, d, e]);
    expect(ids.map((i) => i.itemId)).toEqual(["t-0001", "SN-2", "3", "t-0001", "5"]);
    expect(ids[3]).toMatchObject({ skipped: true, preError: { code: "ITEM_DUPLICADO" } });
    expect(ids[4]).toMatchObject({ skipped: false, preError: { code: "EXTERNAL_ID_INVALIDO" } });
  });
});

describe("RenderPool (worker threads loaded through tsx)", () => {
  it("renders identical bytes for identical input, refuses a bad CPF, and times out", async () => {
    const pool = new RenderPool(2, 20_000);
    try {
      const f = prepareItem(boletoValido(1), ctx).ficha;
      const [a, b] = await Promise.all([pool.render(f), pool.render(f)]);
      expect(Buffer.from(a).subarray(0, 5).toString()).toBe("%PDF-");
      expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(0);
      // refused before rendering, under the contract's name for the field
      expect(() => prepareItem(boletoInvalido(2, 0), ctx)).toThrow(
        expect.objectContaining({ code: "CPF_CNPJ_INVALIDO", field: "pagador.document.number" }),
      );
      // and the PDF engine refuses it too, should a bad ficha reach a render thread
      const bad = { ...f, pagador: { ...f.pagador, documento: "12345678900" } };
      const err = await pool.render(bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RenderFailure);
      expect(err).toMatchObject({ code: "CPF_CNPJ_INVALIDO", field: "pagador.documento", deterministic: true });
    } finally {
      await pool.close();
    }
    const slow = new RenderPool(1, 1);
    try {
      const err = await slow.render(prepareItem(boletoValido(3), ctx).ficha).catch((e: unknown) => e);
      expect((err as Error).name).toBe("RenderTimeoutError");
      // the stuck thread was replaced: the pool still renders
      (slow as unknown as { pool: { timeoutMs: number } }).pool.timeoutMs = 20_000;
      expect((await slow.render(prepareItem(boletoValido(4), ctx).ficha)).length).toBeGreaterThan(1000);
    } finally {
      await slow.close();
    }
  });
});
