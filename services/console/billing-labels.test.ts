import { describe, expect, it } from "vitest";
import { describeError, describeRetry, formatBytes, formatDuration } from "./billing-labels.js";

describe("Cobrança labels", () => {
  it("formats durations and sizes the way an operator reads them", () => {
    expect([formatDuration(350), formatDuration(1234), formatDuration(125_000), formatDuration(3_720_000)]).toEqual([
      "350 ms",
      "1,2 s",
      "2 min 05 s",
      "1 h 02 min",
    ]);
    expect([formatBytes(812), formatBytes(14_540), formatBytes(3_250_000)]).toEqual(["812 B", "14,2 KiB", "3,1 MiB"]);
  });
  it("says which errors a retry may fix, and what a retry did", () => {
    expect(describeError({ code: "TENTATIVAS_ESGOTADAS", field: "", message: "artifacts indisponível", retryable: true })).toBe(
      "TENTATIVAS_ESGOTADAS: artifacts indisponível — transitório, reprocessável",
    );
    expect(describeError({ code: "BANCO_DESCONHECIDO", field: "conta.banco", message: "", retryable: false })).toBe(
      "BANCO_DESCONHECIDO (conta.banco)",
    );
    expect(describeRetry({ requeued: 2, state: "processing", skippedItemIds: [] }, "item")).toBe(
      "2 itens reenfileirados; o job voltou a processando.",
    );
    expect(describeRetry({ requeued: 1, state: "processing", skippedItemIds: [] }, "sublote")).toBe(
      "1 sublote reenfileirado; o job voltou a processando.",
    );
    expect(describeRetry({ requeued: 0, state: "failed", skippedItemIds: [] }, "item")).toBe(
      "Nenhum item reenfileirado: não há falhas reprocessáveis.",
    );
  });
});
