// NSA allocation against real MariaDB (anchors §5.2 #12): sub-batches of one convênio that allocate at
// the same moment get distinct, consecutive numbers; a sub-batch asking again gets the number it
// already took; other convênios and the sandbox have sequences of their own.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../libs/db/migrate.js";
import { Environment } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { RemessaRepo, type SubloteChave } from "./repo.js";

const MIGRATIONS = fileURLToPath(new URL("../../../migrations", import.meta.url));
let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await createThrowawayDatabase();
  await migrate(db.pool, MIGRATIONS);
});
afterAll(async () => {
  await db?.drop();
});

const CHAVE: SubloteChave = {
  banco: "001",
  layout: 240,
  convenio: "1234567",
  carteira: "17",
  conta: "12345",
  agencia: "1234",
  variacao: "019",
  pix: false,
};
const seq = (convenio: string, environment = Environment.PRODUCTION) => ({ tenant: "t", environment, banco: "001", convenio });

async function subLotes(repo: RemessaRepo, jobs: number, perJob: number): Promise<[string, number][]> {
  const out: [string, number][] = [];
  for (let j = 0; j < jobs; j++) {
    const jobId = `job-${j}-${Date.now()}`;
    const c = await db.pool.getConnection();
    try {
      await repo.insert(
        c,
        jobId,
        Array.from({ length: perJob }, (_, index) => ({
          index,
          subloteId: `${jobId}-${index}`,
          chave: CHAVE,
          titulos: 1,
          valorTotalCents: 100,
        })),
      );
    } finally {
      c.release();
    }
    for (let index = 0; index < perJob; index++) out.push([jobId, index]);
  }
  return out;
}

describe("NSA allocation", () => {
  it("gives 40 sub-batches of one convênio allocating at once 40 distinct consecutive NSAs, and each its own again", async () => {
    // Ten connections, so the allocations really run side by side in the server.
    const repo = new RemessaRepo(db.newPool({ connectionLimit: 10 }));
    const all = await subLotes(repo, 4, 10);
    const first = await Promise.all(all.map(([jobId, i]) => repo.allocateNsa(jobId, i, seq("1234567"))));
    expect(first.map((a) => a.nsa).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, k) => k + 1));
    const again = await Promise.all(all.map(([jobId, i]) => repo.allocateNsa(jobId, i, seq("1234567"))));
    expect(again).toEqual(first);

    const [other] = await subLotes(repo, 1, 1);
    expect((await repo.allocateNsa(other![0], other![1], seq("7654321"))).nsa).toBe(1);
    const [sandbox] = await subLotes(repo, 1, 1);
    expect((await repo.allocateNsa(sandbox![0], sandbox![1], seq("1234567", Environment.SANDBOX))).nsa).toBe(1);
    const [next] = await subLotes(repo, 1, 1);
    expect((await repo.allocateNsa(next![0], next![1], seq("1234567"))).nsa).toBe(41);
  });
});
