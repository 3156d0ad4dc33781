// The renderer's error mapping, with real worker threads over a stand-in store client: what the store
// and the engine answer becomes the contract's codes, never INTERNAL for the data's fault.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { buildChave } from "../../libs/adn/chave.js";
import { DanfseError, renderDanfse } from "../../libs/danfse/index.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { createRenderer } from "./renderer.js";
import { mapInOrder } from "./in-order.js";

const chave = buildChave({
  cMun: "3550308",
  ambGer: 2,
  tpInsc: 2,
  inscricao: "11222333000181",
  nNFSe: 1,
  year: 2026,
  month: 11,
  codigo: 1,
});
const BROKEN = new TextEncoder().encode('<NFSe versao="1.01"><nothing/></NFSe>');

type Answer = () => Promise<unknown>;
let answer: Answer = async () => ({});
const store = { getDocument: () => answer() } as unknown as Client<typeof StoreService>;
const renderer = createRenderer({ store, threads: 1, timeoutMs: 20_000 });
afterAll(() => renderer.close());

async function refusal(p: Promise<unknown>) {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ConnectError;
  expect(err).toBeInstanceOf(ConnectError);
  const info = err.findDetails(ErrorInfoSchema)[0];
  return { code: err.code, reason: info?.reason, field: info?.metadata.field };
}

describe("renderer", () => {
  it("refuses an XML the engine cannot draw with FAILED_PRECONDITION NOT_RENDERABLE naming the engine's field", async () => {
    let expected: DanfseError | undefined;
    try {
      renderDanfse({ xml: BROKEN, events: [] });
    } catch (e) {
      expected = e as DanfseError;
    }
    expect(expected).toBeInstanceOf(DanfseError);
    answer = async () => ({ document: { xml: BROKEN }, events: [] });
    expect(await refusal(renderer.render("3550308", chave))).toEqual({
      code: Code.FailedPrecondition,
      reason: "NOT_RENDERABLE",
      field: expected!.field,
    });
  });

  it("turns the store's NOT_FOUND into DOCUMENT_NOT_FOUND or MUNICIPALITY_NOT_FOUND, and keeps UNAVAILABLE", async () => {
    answer = async () => Promise.reject(new ConnectError("note not stored", Code.NotFound));
    expect(await refusal(renderer.render("3550308", chave))).toMatchObject({ code: Code.NotFound, reason: "DOCUMENT_NOT_FOUND" });
    answer = async () =>
      Promise.reject(
        new ConnectError("municipality 3550308 is not registered", Code.NotFound, undefined, [
          { desc: ErrorInfoSchema, value: { reason: "MUNICIPALITY_NOT_FOUND", domain: "malha.store", metadata: {} } },
        ] as never),
      );
    expect(await refusal(renderer.render("3550308", chave))).toMatchObject({ code: Code.NotFound, reason: "MUNICIPALITY_NOT_FOUND" });
    answer = async () => Promise.reject(new ConnectError("connection refused", Code.Unavailable));
    expect((await refusal(renderer.render("3550308", chave))).code).toBe(Code.Unavailable);
  });
});

describe("mapInOrder", () => {
  it("yields in the items' order with at most `concurrency` calls running", async () => {
    let running = 0;
    let most = 0;
    const out: number[] = [];
    for await (const r of mapInOrder([5, 1, 4, 2, 3, 0], 3, async (n) => {
      most = Math.max(most, ++running);
      await new Promise((res) => setTimeout(res, n));
      running--;
      return n * 10;
    }))
      out.push(r);
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(3);
  });
});
