// Many new municipalities registered at once (an onboarding script, several operators): every caller sees
// success with every municipality and feed recorded once. A registration inserts before it reads (0060), so
// it takes no gap lock; a deadlock that still happens is run again by the store.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { storeClient } from "./testing/fixtures.js";

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  ({ client, close } = storeClient(store.baseUrl));
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

describe("RegisterMunicipality under concurrency", () => {
  it("registers 48 new municipalities at once, and the same ones again, without an error", async () => {
    // São Paulo state codes 3500000 + k: valid prefix, all new, adjacent in the index (the same gaps).
    const ibges = Array.from({ length: 48 }, (_, k) => String(3_500_105 + k * 7));
    const register = (ibge: string) =>
      client.registerMunicipality({
        ibge,
        name: `Município ${ibge}`,
        uf: "SP",
        active: true,
        feeds: [
          { ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO },
          { ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.RECEPCAO },
          { ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO },
        ],
      });
    const first = await Promise.allSettled(ibges.map(register));
    const failures = first.flatMap((r) => (r.status === "rejected" ? [String((r.reason as Error).message)] : []));
    expect(failures).toEqual([]);
    expect(first.every((r) => r.status === "fulfilled" && r.value.created)).toBe(true);
    // Repeating a registration is idempotent, also when all of them race again.
    const again = await Promise.allSettled(ibges.map(register));
    expect(again.flatMap((r) => (r.status === "rejected" ? [String((r.reason as Error).message)] : []))).toEqual([]);
    expect(again.every((r) => r.status === "fulfilled" && !r.value.created)).toBe(true);

    const [m] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM municipalities");
    expect(Number(m[0]!.n)).toBe(48);
    const [s] = await db.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n, COUNT(DISTINCT ibge, ambiente, tipo_nsu) AS d FROM nfse_sync_state",
    );
    expect([Number(s[0]!.n), Number(s[0]!.d)]).toEqual([144, 144]);
  }, 120_000);
});
