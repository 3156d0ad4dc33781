import { describe, expect, it } from "vitest";
import { keysetAfter, orderBy, Where } from "./keyset.js";

describe("keyset", () => {
  it("continues after the last key with an index-friendly OR chain, all values bound", () => {
    const cols = [{ expr: "ambiente" }, { expr: "tipo_nsu" }, { expr: "nsu" }];
    expect(keysetAfter(cols, ["1", "MEI", "9"])).toEqual({
      sql: "(ambiente > ? OR (ambiente = ? AND tipo_nsu > ?) OR (ambiente = ? AND tipo_nsu = ? AND nsu > ?))",
      params: ["1", "1", "MEI", "1", "MEI", "9"],
    });
    expect(
      keysetAfter(
        [
          { expr: "started_at", desc: true },
          { expr: "id", desc: true },
        ],
        ["t", "5"],
      ).sql,
    ).toBe("(started_at < ? OR (started_at = ? AND id < ?))");
    expect(orderBy([{ expr: "a" }, { expr: "b", desc: true }])).toBe("a ASC, b DESC");
    expect(() => keysetAfter(cols, ["1"])).toThrow();
  });

  it("builds WHERE clauses", () => {
    const w = new Where().add("a = ?", 1).add("b IS NULL");
    expect(w.sql).toBe("WHERE a = ? AND b IS NULL");
    expect(w.params).toEqual([1]);
    expect(new Where().sql).toBe("");
  });
});
