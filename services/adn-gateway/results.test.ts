import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { AdnEnvelope } from "../../libs/adn/envelope.js";
import { BatchStatus } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { AdnRejectionSchema, AmbienteMismatchSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { DistributionItemSchema, FaultReason } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { Ambiente } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { callInfo, interpret, selectBatch } from "./results.js";

const env = (over: Partial<AdnEnvelope>): AdnEnvelope => ({
  statusProcessamento: "DOCUMENTOS_LOCALIZADOS",
  lote: [],
  alertas: [],
  erros: [],
  tipoAmbiente: "HOMOLOGACAO",
  versaoAplicativo: "1.0.0.0",
  ...over,
});

function thrown(fn: () => unknown): ConnectError {
  try {
    fn();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected a throw");
}

const item = (nsu: bigint, fault = false) =>
  create(DistributionItemSchema, { nsu, ...(fault ? { content: { case: "fault", value: { reason: FaultReason.MISSING_FIELD } } } : {}) });

describe("interpret", () => {
  it("maps found, nothing found (404, or 200 with the status) and the hole codes", () => {
    expect(interpret(env({}), 200, Ambiente.PRODUCAO_RESTRITA)).toEqual({ found: true });
    const none = env({
      statusProcessamento: "NENHUM_DOCUMENTO_LOCALIZADO",
      erros: [{ codigo: "E2040", descricao: "nada", complemento: "", parametros: [] }],
    });
    expect(interpret(none, 404, Ambiente.PRODUCAO_RESTRITA)).toEqual({ found: false, codigo: "E2040", descricao: "nada" });
    expect(interpret(none, 200, Ambiente.PRODUCAO_RESTRITA)).toMatchObject({ found: false });
  });

  it("refuses another ambiente first, then rejections with every error kept", () => {
    const rejected = env({
      statusProcessamento: "REJEICAO",
      erros: [
        { codigo: "E2001", descricao: "CNPJ", complemento: "c", parametros: [] },
        { codigo: "E1", descricao: "", complemento: "", parametros: [] },
      ],
    });
    const mismatch = thrown(() => interpret(rejected, 400, Ambiente.PRODUCAO));
    expect(mismatch.code).toBe(Code.FailedPrecondition);
    expect(mismatch.findDetails(AmbienteMismatchSchema)[0]).toMatchObject({ expected: Ambiente.PRODUCAO, received: "HOMOLOGACAO" });
    const rejection = thrown(() => interpret(rejected, 400, Ambiente.PRODUCAO_RESTRITA));
    expect(rejection.findDetails(AdnRejectionSchema)[0]).toMatchObject({ codigo: "E2001", descricao: "CNPJ", httpStatus: 400 });
    expect(rejection.findDetails(AdnRejectionSchema)[0]!.erros).toHaveLength(2);
    expect(rejection.message).toContain("E2001");
  });

  it("refuses a success without TipoAmbiente and statuses outside the contract", () => {
    expect(
      thrown(() => interpret(env({ tipoAmbiente: undefined }), 200, Ambiente.PRODUCAO_RESTRITA)).findDetails(AmbienteMismatchSchema)[0]
        ?.received,
    ).toBe("");
    expect(thrown(() => interpret(env({}), 404, Ambiente.PRODUCAO_RESTRITA)).code).toBe(Code.Unknown);
    expect(thrown(() => interpret(env({ statusProcessamento: "PROCESSANDO" }), 200, Ambiente.PRODUCAO_RESTRITA)).code).toBe(Code.Unknown);
  });
});

describe("selectBatch", () => {
  it("drops NSUs up to after_nsu (inclusive start), repeated NSUs, and sorts", () => {
    const res = selectBatch([item(10n), item(12n), item(11n), item(12n), item(9n)], 10n, 5);
    expect(res.items.map((i) => i.nsu)).toEqual([11n, 12n]);
    expect(res).toMatchObject({
      status: BatchStatus.DOCUMENTS_FOUND,
      highestNsu: 12n,
      droppedCount: 2,
      duplicateCount: 1,
      pageSizeSeen: 5,
    });
  });

  it("ends the stream when nothing is newer, and only then leaves NSU-less faults out", () => {
    expect(selectBatch([item(10n)], 10n, 1)).toMatchObject({
      status: BatchStatus.END_OF_STREAM,
      items: [],
      highestNsu: 0n,
      droppedCount: 1,
    });
    expect(selectBatch([item(0n, true)], 10n, 1)).toMatchObject({ status: BatchStatus.END_OF_STREAM, orphanFaults: 1 });
    const withNew = selectBatch([item(11n), item(0n, true)], 10n, 2);
    expect(withNew.items.map((i) => i.nsu)).toEqual([0n, 11n]);
    expect(withNew.highestNsu).toBe(11n);
  });
});

describe("callInfo", () => {
  it("carries the envelope facts, attempts and elapsed time", () => {
    const info = callInfo(
      env({
        dataHoraProcessamento: "2026-03-12T08:00:00.1234567-03:00",
        alertas: [{ codigo: "A", descricao: "d", complemento: "", parametros: [] }],
      }),
      2,
      1500,
      200,
    );
    expect(info).toMatchObject({
      versaoAplicativo: "1.0.0.0",
      attempts: 2,
      httpStatus: 200,
      elapsed: { seconds: 1n, nanos: 500_000_000 },
      adnProcessedAt: { nanos: 123_456_700 },
    });
    expect(info.alerts).toHaveLength(1);
  });
});
