import { describe, expect, it } from "vitest";
import { preparedMunicipalities, preparedStatementsPerConnection, STATEMENT_CACHE_BYTES } from "./db.js";

describe("preparedStatementsPerConnection", () => {
  it("sizes the statement cache by memory across the pool, one municipality's two statements at least", () => {
    expect(preparedStatementsPerConnection(20)).toBe(22);
    expect(preparedStatementsPerConnection(1)).toBe(256);
    for (const limit of [1, 10, 20, 32, 100]) {
      // Worst case: every cached statement is the widest one (8 rows of nfse_documentos, ≈ 110 KB).
      expect(limit * preparedStatementsPerConnection(limit) * 110 * 1024).toBeLessThanOrEqual(STATEMENT_CACHE_BYTES);
    }
    expect(preparedStatementsPerConnection(1000)).toBe(2);
  });
});

describe("preparedMunicipalities", () => {
  it("lets as many municipalities prepare as one connection caches next to the two shared statements", () => {
    expect(preparedMunicipalities(20)).toBe(10);
    for (const limit of [1, 10, 20, 32, 100, 1000]) {
      expect(2 * preparedMunicipalities(limit) + 2).toBeLessThanOrEqual(Math.max(4, preparedStatementsPerConnection(limit)));
    }
    expect(preparedMunicipalities(1000)).toBe(1);
  });
});
