// The feed list's paging and filters over a stand-in coordinator: one page per refresh, never the whole list.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  type CoordinatorService,
  FeedState,
  FeedStatusSchema,
  type ListFeedStatusRequest,
} from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { MunicipioView } from "./api-types.js";
import type { MunicipioDirectory } from "./municipios.js";
import { createSyncView } from "./sync-view.js";

const municipios: MunicipioView[] = Array.from({ length: 40 }, (_, i) => ({
  ibge: String(3500000 + i),
  name: i === 0 ? "São Paulo" : i < 30 ? `Santa Rita ${i}` : `Cidade ${i}`,
  uf: i < 2 ? "SP" : i < 35 ? "MG" : "RJ",
  active: true,
}));
const statuses = municipios.map((m, i) =>
  create(FeedStatusSchema, {
    feed: { ibge: m.ibge, ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO },
    state: i % 5 === 0 ? FeedState.RUNNING : FeedState.WAITING,
    lastOutcome: i % 5 === 1 ? RunOutcome.FAILED : RunOutcome.CAUGHT_UP,
    hasActiveCertificate: i !== 1,
  }),
);

function setup() {
  const calls: ListFeedStatusRequest[] = [];
  const coordinator = {
    async listFeedStatus(req: ListFeedStatusRequest) {
      calls.push(req);
      // Like the coordinator: pages over the feeds of the filters (the real one in the store's SQL).
      const uf = (s: (typeof statuses)[number]) => municipios.find((m) => m.ibge === s.feed!.ibge)!.uf;
      const all = statuses.filter(
        (s) =>
          (!req.ibge || s.feed!.ibge === req.ibge) &&
          (!req.uf || uf(s) === req.uf) &&
          (req.state === FeedState.UNSPECIFIED || s.state === req.state) &&
          (req.lastRunFailed === undefined || (s.lastOutcome === RunOutcome.FAILED) === req.lastRunFailed),
      );
      const start = Number(req.pageToken || 0);
      const size = req.pageSize || 100;
      const page = all.slice(start, start + size);
      return { statuses: page, nextPageToken: start + size < all.length ? String(start + size) : "" };
    },
    async cancelSync() {
      throw new ConnectError("run not found", Code.NotFound, undefined, [
        { desc: ErrorInfoSchema, value: { reason: "RUN_NOT_FOUND", domain: "malha.store" } },
      ]);
    },
  } as unknown as Client<typeof CoordinatorService>;
  const directory: MunicipioDirectory = { list: async () => municipios, get: async (ibge) => municipios.find((m) => m.ibge === ibge) };
  // The vault's dates: one for an ibge whose feed has an active certificate, one for the feed that has none.
  const certificates = {
    byIbge: async () =>
      new Map([
        ["3500000", "2027-01-15T12:00:00.000Z"],
        ["3500001", "2027-02-01T12:00:00.000Z"],
      ]),
  };
  const view = createSyncView({ coordinator, store: {} as Client<typeof StoreService>, municipios: directory, certificates });
  return { view, calls };
}

describe("the Sincronização list", () => {
  it("carries the active certificate's expiry, and none for a feed the coordinator says has no certificate", async () => {
    const { view } = setup();
    const [sp, second, third] = (await view.listFeeds({ pageSize: 3 })).feeds;
    expect(sp).toMatchObject({ hasActiveCertificate: true, certificateNotAfter: "2027-01-15T12:00:00.000Z" });
    expect(second).toMatchObject({ hasActiveCertificate: false });
    expect(second).not.toHaveProperty("certificateNotAfter");
    expect(third).toMatchObject({ hasActiveCertificate: true });
    expect(third).not.toHaveProperty("certificateNotAfter");
  });

  it("reads one page per call and hands back a token for the next", async () => {
    const { view, calls } = setup();
    const first = await view.listFeeds({ pageSize: 15 });
    expect(first.feeds.map((f) => f.ibge)).toEqual(municipios.slice(0, 15).map((m) => m.ibge));
    expect(first.feeds[0]).toMatchObject({ name: "São Paulo", uf: "SP", state: "running" });
    expect(calls).toHaveLength(1);
    const second = await view.listFeeds({ pageSize: 15, pageToken: first.nextPageToken! });
    expect(second.feeds[0]!.ibge).toBe(municipios[15]!.ibge);
    const last = await view.listFeeds({ pageSize: 15, pageToken: second.nextPageToken! });
    expect(last.feeds).toHaveLength(10);
    expect(last.nextPageToken).toBeUndefined();
    await expect(view.listFeeds({ pageToken: "x1" })).rejects.toThrow("pageToken is not one this console issued");
  });

  it("asks by ibge for a narrow name filter, accent- and case-insensitively", async () => {
    const { view, calls } = setup();
    expect((await view.listFeeds({ q: "sao PAULO" })).feeds.map((f) => f.name)).toEqual(["São Paulo"]);
    expect(calls.map((c) => c.ibge)).toEqual(["3500000"]);
    expect((await view.listFeeds({ q: "3500007" })).feeds.map((f) => f.ibge)).toEqual(["3500007"]);
  });

  it("hands the UF and state to the coordinator: one call, one page of exactly the rows shown", async () => {
    const { view, calls } = setup();
    const rj = await view.listFeeds({ uf: "RJ", state: "waiting", pageSize: 2 });
    expect(rj.feeds.map((f) => [f.uf, f.state])).toEqual([
      ["RJ", "waiting"],
      ["RJ", "waiting"],
    ]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ uf: "RJ", state: FeedState.WAITING, lastRunFailed: false, pageSize: 2 });
    const rest = await view.listFeeds({ uf: "RJ", state: "waiting", pageSize: 2, pageToken: rj.nextPageToken! });
    // 35..39 are RJ; 35 is running and 36 failed.
    expect(rest.feeds.map((f) => f.ibge)).toEqual(["3500039"]);
    expect(rest.nextPageToken).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it("scans pages for a broad filter, asking only for what the page still lacks", async () => {
    const { view, calls } = setup();
    // 29 "Santa Rita" municipalities: too many to ask one by one.
    const page = await view.listFeeds({ q: "santa", pageSize: 10 });
    expect(page.feeds).toHaveLength(10);
    expect(page.feeds.every((f) => f.name.startsWith("Santa Rita"))).toBe(true);
    expect(calls.map((c) => c.pageSize)).toEqual([10, 1]);
    const rest = await view.listFeeds({ q: "santa", pageSize: 100, pageToken: page.nextPageToken! });
    expect(rest.feeds).toHaveLength(19);
    expect(new Set([...page.feeds, ...rest.feeds].map((f) => f.ibge)).size).toBe(29);
  });

  it("tells an error (waiting after a failed run) from plain waiting, both filtered by the coordinator", async () => {
    const { view, calls } = setup();
    const errors = await view.listFeeds({ state: "error" });
    expect(calls[0]).toMatchObject({ state: FeedState.WAITING, lastRunFailed: true });
    expect(calls).toHaveLength(1);
    expect(errors.feeds.map((f) => f.ibge)).toEqual(municipios.filter((_, i) => i % 5 === 1).map((m) => m.ibge));
    const waiting = await view.listFeeds({ state: "waiting" });
    expect(waiting.feeds.every((f) => f.state === "waiting")).toBe(true);
    expect(waiting.feeds).toHaveLength(40 - 8 - 8);
  });

  it("reports nothing to cancel when the store finds no run on the feed", async () => {
    const { view } = setup();
    expect(await view.cancel("console:ana", { ibge: "3500000", ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO })).toEqual({
      dequeued: false,
      nothingToCancel: true,
    });
  });
});
