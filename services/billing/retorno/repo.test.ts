// Retorno occurrences against real MariaDB: what a bank writes in the fields we index by (seu número,
// nosso número) may be Latin-1 or longer than our keys (decision 0025); the occurrence is stored whole
// and found by its line, never refused by the database or cut into a key that looks real.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../libs/db/migrate.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { lookupKey, RetornoRepo, type OccurrenceInsert } from "./repo.js";

const MIGRATIONS = fileURLToPath(new URL("../../../migrations", import.meta.url));
let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, MIGRATIONS);
});
afterAll(async () => {
  await db?.drop();
});

const occurrence = (line: number, boletoId: string, nossoNumero = `0000${line}`): OccurrenceInsert => ({
  line,
  state: 1,
  nossoNumero,
  boletoId,
  fingerprintSha256: `${line}`.padStart(64, "f"),
  body: { line, boletoId, nossoNumero },
});

describe("retorno occurrences", () => {
  it("keeps a look-up key only when its column can hold it whole", () => {
    expect(lookupKey("SEU-NUMERO-17", 64)).toBe("SEU-NUMERO-17");
    expect(lookupKey("COBRANÇA 17", 64)).toBe("");
    expect(lookupKey("x".repeat(65), 64)).toBe("");
    expect(lookupKey("x".repeat(64), 64)).toBe("x".repeat(64));
  });

  it("stores occurrences whose seu número is Latin-1 or over-long, each whole in its body and found by line", async () => {
    const repo = new RetornoRepo(db.pool);
    const long = `DOC-${"9".repeat(70)}`;
    await repo.store("t", "job-latin1", [occurrence(2, "SEU-17"), occurrence(3, "COBRANÇA Nº 5", "NÚMERO"), occurrence(4, long)]);
    const all = (await repo.page("job-latin1", { excludeDuplicates: false, afterLine: 0, limit: 10 })).map(
      (b) => JSON.parse(b) as { line: number; boletoId: string; nossoNumero: string },
    );
    expect(all.map((o) => [o.line, o.boletoId])).toEqual([
      [2, "SEU-17"],
      [3, "COBRANÇA Nº 5"],
      [4, long],
    ]);
    expect(all[1]?.nossoNumero).toBe("NÚMERO");
    const byId = await repo.page("job-latin1", { boletoId: "SEU-17", excludeDuplicates: false, afterLine: 0, limit: 10 });
    expect(byId).toHaveLength(1);
    // Keys no column can hold match nothing rather than failing in SQL.
    expect(await repo.page("job-latin1", { boletoId: "COBRANÇA Nº 5", excludeDuplicates: false, afterLine: 0, limit: 10 })).toEqual([]);
    expect(await repo.page("job-latin1", { nossoNumero: "NÚMERO", excludeDuplicates: false, afterLine: 0, limit: 10 })).toEqual([]);
    expect(await repo.page("job-latin1", { boletoId: long.slice(0, 64), excludeDuplicates: false, afterLine: 0, limit: 10 })).toEqual([]);
  });
});
