// Infrastructure restarts in the middle of a sync, on private servers so nothing else is disturbed:
// NATS (leases) and MariaDB (the store). The sync recovers and completes with nothing lost.
import { afterEach, describe, it } from "vitest";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { expectDistributedOnce, until } from "../support/sync-checks.js";
import { startPrivateMariaDb, type PrivateMariaDb } from "../support/private-mariadb.js";
import { startPrivateNats, type PrivateNats } from "../support/nats-server.js";

let mesh: NfseMesh | undefined;
let nats: PrivateNats | undefined;
let maria: PrivateMariaDb | undefined;
afterEach(async () => {
  await mesh?.stop();
  await nats?.destroy();
  await maria?.destroy();
  mesh = nats = maria = undefined;
});

const feedOf = (m: NfseMesh) => ({ ibge: m.municipalities[0]!.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
const state = async (m: NfseMesh) => (await m.storeClient.getSyncState({ feed: feedOf(m) })).state!;

const expectComplete = (m: NfseMesh) => expectDistributedOnce(m, m.municipalities[0]!.ibge);

const FAST_RETRY = { NFSE_FAILURE_BACKOFF_SECONDS: "1", NFSE_FAILURE_BACKOFF_MAX_SECONDS: "2" };

describe("NFS-e sync across infrastructure restarts", () => {
  it("recovers from a NATS restart in the middle of a sync", async () => {
    nats = await startPrivateNats();
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 2500,
      coordinators: 2,
      natsUrl: nats.url,
      switches: { latencyMs: 25 },
      coordinatorEnv: FAST_RETRY,
    });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastNsu > 300n, "the sync to be under way");
    await nats.stop();
    await new Promise((r) => setTimeout(r, 1000));
    await nats.start();
    await until(async () => (await state(mesh!)).lastOutcome === RunOutcome.CAUGHT_UP, "the feed to finish after the restart");
    await expectComplete(mesh);
  });

  it("recovers from a MariaDB restart in the middle of a sync", async () => {
    maria = await startPrivateMariaDb();
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 2500,
      coordinators: 1,
      mysqlUrl: maria.url,
      switches: { latencyMs: 25 },
      coordinatorEnv: FAST_RETRY,
    });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastNsu > 300n, "the sync to be under way");
    await maria.stop("SIGKILL"); // a crash, not a clean shutdown: InnoDB recovers from its log
    await new Promise((r) => setTimeout(r, 1000));
    await maria.start();
    await until(async () => (await state(mesh!)).lastOutcome === RunOutcome.CAUGHT_UP, "the feed to finish after the restart");
    await expectComplete(mesh);
  });
});
