import { describe, expect, it } from "vitest";
import { preparedStatementsPerConnection } from "./db.js";

describe("preparedStatementsPerConnection", () => {
  it("keeps the pool's prepared statements within half the server's default limit", () => {
    expect(preparedStatementsPerConnection(20)).toBe(256);
    expect(preparedStatementsPerConnection(100)).toBe(81);
    for (const limit of [1, 20, 32, 100]) expect(limit * preparedStatementsPerConnection(limit)).toBeLessThanOrEqual(8192);
    // A pool too large for that still keeps one municipality's 22 statements per connection.
    expect(preparedStatementsPerConnection(1000)).toBe(24);
  });
});
