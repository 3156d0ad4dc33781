// Tables copied from a template before a migration widened it get the new columns and indexes at start.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../libs/log/logger.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import type { StoreDb } from "./context.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { alignMunicipalityTables } from "./table-shape.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const log = createLogger({ service: "test", level: "silent" });

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  db = await migratedStoreDb(tdb);
});
afterAll(async () => {
  await tdb?.drop();
});

async function shape(table: string) {
  const [cols] = await tdb.pool.query<RowDataPacket[]>(`SHOW FULL COLUMNS FROM \`${table}\``);
  const [keys] = await tdb.pool.query<RowDataPacket[]>(`SHOW INDEX FROM \`${table}\``);
  return {
    columns: cols.map((c) => [c.Field, c.Type, c.Collation, c.Null]),
    keys: [...new Set(keys.map((k) => `${k.Key_name}:${k.Column_name}:${k.Seq_in_index}`))].sort(),
  };
}

describe("alignMunicipalityTables", () => {
  it("adds the columns and indexes an older copy lacks, in the template's order, and is a no-op the second time", async () => {
    await tdb.pool.query("CREATE TABLE nfse_documentos_4106902 LIKE nfse_documentos_template");
    await tdb.pool.query("CREATE TABLE nfse_eventos_4106902 LIKE nfse_eventos_template");
    await tdb.pool.query(
      "INSERT INTO nfse_documentos_4106902 (chave, ambiente, tipo_nsu, nsu, xml, xml_sha256) VALUES (?, 1, 'DISTRIBUICAO', 1, 'x', ?)",
      ["1".repeat(50), "0".repeat(64)],
    );
    // The shape of a copy made before migration 009.
    await tdb.pool.query(
      `ALTER TABLE nfse_documentos_4106902 DROP INDEX ix_destinatario, DROP COLUMN destinatario_documento, DROP COLUMN destinatario_nif,
         DROP COLUMN destinatario_nome, DROP COLUMN ibs_uf_aliquota, DROP COLUMN valor_total_nf`,
    );
    const before = await shape("nfse_documentos_4106902");
    expect(before.columns.map((c) => c[0])).not.toContain("valor_total_nf");

    expect(await alignMunicipalityTables(db, log)).toBe(1);
    const template = await shape("nfse_documentos_template");
    expect(await shape("nfse_documentos_4106902")).toEqual(template);
    expect(await shape("nfse_eventos_4106902")).toEqual(await shape("nfse_eventos_template"));
    const [rows] = await tdb.pool.query<RowDataPacket[]>("SELECT nsu, valor_total_nf FROM nfse_documentos_4106902");
    expect(rows).toEqual([{ nsu: "1", valor_total_nf: null }]);

    expect(await alignMunicipalityTables(db, log)).toBe(0);
  });
});
