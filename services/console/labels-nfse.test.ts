import { describe, expect, it } from "vitest";
import {
  describeCancel,
  describeExpiry,
  describeProgress,
  feedPath,
  formatCents,
  formatDateTime,
  formatDuration,
  formatTaxId,
} from "./labels-nfse.js";

const now = new Date("2026-12-01T16:00:00Z");

describe("feed, document and certificate labels", () => {
  it("says how long a run took, or has been running", () => {
    expect(formatDuration("2026-12-01T15:59:15Z", "2026-12-01T16:00:00Z", now)).toBe("45 s");
    expect(formatDuration("2026-12-01T15:56:55Z", undefined, now)).toBe("3 min 05 s");
    expect(formatDuration("2026-12-01T13:50:00Z", "2026-12-01T16:00:00Z", now)).toBe("2 h 10 min");
    expect(formatDuration(undefined, undefined, now)).toBe("—");
  });

  it("shows a run's progress against the highest NSU it saw", () => {
    expect(describeProgress({ startCursor: "0", endCursor: "350", maxNsuSeen: "400" })).toBe("NSU 0 → 350 de 400 (87%)");
    expect(describeProgress({ startCursor: "400", endCursor: "400", maxNsuSeen: "400" })).toBe("NSU 400 → 400");
    // NSUs are 64-bit: beyond Number's exact range the arithmetic stays exact.
    expect(describeProgress({ startCursor: "9007199254740993", endCursor: "9007199254740995", maxNsuSeen: "9007199254740997" })).toBe(
      "NSU 9007199254740993 → 9007199254740995 de 9007199254740997 (50%)",
    );
  });

  it("formats money, CNPJ (numeric and alphanumeric) and CPF as Brazilians write them", () => {
    expect(formatCents(123456)).toMatch(/^R\$\s1\.234,56$/);
    expect(formatCents(undefined)).toBe("—");
    expect(formatDateTime("2026-12-01T17:05:00Z", "America/Sao_Paulo")).toBe("01/12/2026 14:05");
    expect(formatDateTime(undefined)).toBe("—");
    expect(formatTaxId("11222333000181")).toBe("11.222.333/0001-81");
    expect(formatTaxId("12ABC34501DE35")).toBe("12.ABC.345/01DE-35");
    expect(formatTaxId("12345678909")).toBe("123.456.789-09");
    expect(formatTaxId("NIF-77")).toBe("NIF-77");
  });

  it("counts the days to a certificate's expiry and says when it has passed", () => {
    expect(describeExpiry("2026-12-13T18:00:00Z", now)).toBe("vence em 12 dias");
    expect(describeExpiry("2026-12-02T17:00:00Z", now)).toBe("vence em 1 dia");
    expect(describeExpiry("2026-12-01T20:00:00Z", now)).toBe("vence hoje");
    expect(describeExpiry("2026-11-28T15:00:00Z", now)).toBe("venceu há 4 dias");
    expect(describeExpiry("2026-12-01T15:00:00Z", now)).toBe("venceu há 1 dia");
  });

  it("tells what Cancelar did", () => {
    expect(describeCancel({ dequeued: true, nothingToCancel: false })).toBe("cancelada: retirada da fila");
    expect(describeCancel({ dequeued: false, runId: "r1", nothingToCancel: false })).toMatch(/^cancelamento pedido/);
    expect(describeCancel({ dequeued: false, nothingToCancel: true })).toMatch(/^nada a cancelar/);
    expect(feedPath({ ibge: "3550308", ambiente: "producao_restrita", tipoNsu: "distribuicao" })).toBe(
      "/feeds/3550308/producao_restrita/distribuicao",
    );
  });
});
