// ApplyBatch with `encoded_items` (the serialized DistributionBatch the gateway's DeliverFeed produces), on a
// real store process and a throwaway MariaDB database: same result as typed items, and every malformed
// request refused before anything is written.
import type { RowDataPacket } from "mysql2/promise";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DistributionBatchSchema, type DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema, DocumentStatus } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { MAX_ENCODED_ITEMS_BYTES } from "./handlers/batch-items.js";
import { chaveOf, docItem, eventItem, faultItem, feedOf, rejection, storeClient } from "./testing/fixtures.js";

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

const encode = (items: DistributionItem[]) => toBinary(DistributionBatchSchema, create(DistributionBatchSchema, { items }));

async function startRun(ibge: string, uf: string) {
  await client.registerMunicipality({
    ibge,
    name: `Município ${ibge}`,
    uf,
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
  const run = await client.beginRun({ feed: feedOf(ibge), holder: "coord-a/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
  return { feed: feedOf(ibge), runId: run.runId, fenceToken: 1n };
}

async function stored(ibge: string) {
  const [docs] = await db.pool.query<RowDataPacket[]>(`SELECT nsu, xml, documento_pb FROM \`nfse_documentos_${ibge}\` ORDER BY nsu`);
  const [events] = await db.pool.query<RowDataPacket[]>(`SELECT nsu, evento_pb FROM \`nfse_eventos_${ibge}\` ORDER BY nsu`);
  const [quarantine] = await db.pool.query<RowDataPacket[]>("SELECT nsu FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu", [ibge]);
  const [state] = await db.pool.query<RowDataPacket[]>("SELECT last_nsu FROM nfse_sync_state WHERE ibge = ?", [ibge]);
  return {
    docs,
    events: events.map((r) => String(r.nsu)),
    eventosPb: events.map((r) => Buffer.from(r.evento_pb).toString("hex")),
    quarantine: quarantine.map((r) => String(r.nsu)),
    cursor: String(state[0]!.last_nsu),
  };
}

describe("ApplyBatch with encoded_items", () => {
  it("applies the serialized batch exactly as the same typed items, documento_pb and evento_pb included", async () => {
    // The second document claims a status: derived fields are the store's, whichever way the items come.
    const claiming = docItem(2, 2);
    if (claiming.content.case === "document") claiming.content.value.status = DocumentStatus.CANCELADA;
    const items = [docItem(1, 1), claiming, eventItem(3, chaveOf(1), "101101"), faultItem(4, Buffer.from("H4sI-cut"))];
    const typed = await startRun("3550308", "SP");
    const encoded = await startRun("3304557", "RJ");
    const a = await client.applyBatch({ ...typed, items, newCursor: 4n });
    const b = await client.applyBatch({ ...encoded, encodedItems: encode(items), newCursor: 4n });
    expect(b.counts).toEqual(a.counts);
    expect(b.cursor).toBe(4n);
    const [sa, sb] = [await stored("3550308"), await stored("3304557")];
    expect(sb).toEqual(sa);
    expect(sb.docs.map((d) => String(d.nsu))).toEqual(["1", "2"]);
    const pbs = sb.docs.map((d) => fromBinary(DocumentSchema, d.documento_pb));
    expect(pbs.map((d) => [d.chave, d.status])).toEqual([
      [chaveOf(1), DocumentStatus.UNSPECIFIED],
      [chaveOf(2), DocumentStatus.UNSPECIFIED],
    ]);
    expect(sb.events).toEqual(["3"]);
    expect(sb.quarantine).toEqual(["4"]);
  });

  it("refuses items together with encoded_items, oversized and malformed bytes with INVALID_ARGUMENT, writing nothing", async () => {
    const run = await startRun("3106200", "MG");
    const both = await rejection(
      client.applyBatch({ ...run, items: [docItem(1, 11)], encodedItems: encode([docItem(2, 12)]), newCursor: 2n }),
    );
    expect(both.code).toBe(Code.InvalidArgument);
    expect(both.rawMessage).toBe("set either items (1 given) or encoded_items, not both");

    const truncated = encode([docItem(1, 11), docItem(2, 12)]).subarray(0, 100);
    const cut = await rejection(client.applyBatch({ ...run, encodedItems: truncated, newCursor: 2n }));
    expect(cut.code).toBe(Code.InvalidArgument);
    expect(cut.rawMessage).toMatch(/^encoded_items is not a serialized malha\.nfse\.v1\.DistributionBatch: /);

    // Parses as protobuf, but as field 5, which a DistributionBatch does not have.
    const stranger = await rejection(client.applyBatch({ ...run, encodedItems: Uint8Array.of(0x28, 0x01), newCursor: 0n }));
    expect(stranger.code).toBe(Code.InvalidArgument);
    expect(stranger.rawMessage).toContain("field number 5");

    const huge = await rejection(client.applyBatch({ ...run, encodedItems: new Uint8Array(MAX_ENCODED_ITEMS_BYTES + 1), newCursor: 0n }));
    expect(huge.code).toBe(Code.InvalidArgument);
    expect(huge.rawMessage).toBe(`encoded_items is ${MAX_ENCODED_ITEMS_BYTES + 1} bytes; at most ${MAX_ENCODED_ITEMS_BYTES} are accepted`);

    expect(await stored("3106200")).toEqual({ docs: [], events: [], eventosPb: [], quarantine: [], cursor: "0" });
  });

  it("keeps the empty batch a heartbeat, typed or encoded (an empty DistributionBatch is zero bytes)", async () => {
    const run = await startRun("4106902", "PR");
    expect((await client.applyBatch({ ...run, newCursor: 0n })).cursor).toBe(0n);
    expect((await client.applyBatch({ ...run, encodedItems: new Uint8Array(0), newCursor: 0n })).cursor).toBe(0n);
    const beyond = await rejection(client.applyBatch({ ...run, encodedItems: new Uint8Array(0), newCursor: 9n }));
    expect(beyond.code).toBe(Code.InvalidArgument);
  });
});
