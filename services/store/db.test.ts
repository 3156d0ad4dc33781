import { describe, expect, it } from "vitest";
import { preparedStatementsPerConnection, STATEMENT_CACHE_BYTES } from "./db.js";

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
