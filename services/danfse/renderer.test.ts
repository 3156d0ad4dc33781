// The renderer's error mapping, with real worker threads over a stand-in store client: what the store
// and the engine answer becomes the contract's codes, never INTERNAL for the data's fault.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { buildChave } from "../../libs/adn/chave.js";
import { DanfseError, renderDanfse } from "../../libs/danfse/index.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { feed, xmlOf } from "../../libs/danfse/testing/notes.js";
import { pdfText } from "../../libs/danfse/testing/pdf.js";
import { createRenderer, MAX_BATCH } from "./renderer.js";
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
let batchAnswer: Answer = async () => ({ results: [] });
const store = { getDocument: () => answer(), batchGetDocuments: () => batchAnswer() } as unknown as Client<typeof StoreService>;
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

describe("renderer, many notes at once", () => {
  const good = feed(17, 40).notes.slice(0, 2);
  const chaveOf = (i: number) => good[i]!.chave;

  it("answers in the order asked: a PDF per drawable note, the note's own refusal for the others", async () => {
    const missing = chave;
    batchAnswer = async () => ({
      results: [
        { chave: chaveOf(0), document: { xml: xmlOf(good[0]!) }, events: [] },
        { chave: missing, events: [] },
        { chave: "B".repeat(50), document: { xml: BROKEN }, events: [] },
        { chave: chaveOf(1), document: { xml: xmlOf(good[1]!) }, events: [] },
      ],
    });
    const out = await renderer.renderMany("3550308", [chaveOf(0), missing, "B".repeat(50), chaveOf(1)]);
    expect(out.map((o) => o.chave)).toEqual([chaveOf(0), missing, "B".repeat(50), chaveOf(1)]);
    for (const i of [0, 3]) {
      const o = out[i]!;
      if (!("pdf" in o)) throw new Error(`note ${i} was refused: ${o.error.message}`);
      expect(pdfText(o.pdf)).toContain(good[i === 0 ? 0 : 1]!.numero);
    }
    const refusals = [out[1]!, out[2]!].map((o) => ("error" in o ? o.error.findDetails(ErrorInfoSchema)[0]?.reason : "pdf"));
    expect(refusals).toEqual(["DOCUMENT_NOT_FOUND", "NOT_RENDERABLE"]);
  });

  it("rejects the whole batch when the store is away or the municipality unknown, and refuses an oversized batch", async () => {
    batchAnswer = async () => Promise.reject(new ConnectError("connection refused", Code.Unavailable));
    expect((await refusal(renderer.renderMany("3550308", [chaveOf(0)]))).code).toBe(Code.Unavailable);
    batchAnswer = async () =>
      Promise.reject(
        new ConnectError("municipality 3550308 is not registered", Code.NotFound, undefined, [
          { desc: ErrorInfoSchema, value: { reason: "MUNICIPALITY_NOT_FOUND", domain: "malha.store", metadata: {} } },
        ] as never),
      );
    expect(await refusal(renderer.renderMany("3550308", [chaveOf(0)]))).toMatchObject({
      code: Code.NotFound,
      reason: "MUNICIPALITY_NOT_FOUND",
    });
    await expect(
      renderer.renderMany(
        "3550308",
        Array.from({ length: MAX_BATCH + 1 }, () => chaveOf(0)),
      ),
    ).rejects.toThrow(RangeError);
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
