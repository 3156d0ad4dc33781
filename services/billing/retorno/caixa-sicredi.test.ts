// Caixa's and Sicredi's CNAB 400 retornos through CreateRetornoJob on a real billing process: the
// laravel-boleto files (test/fixtures/cnab README) become occurrences in the states their manuals give the
// codes, with the values read by the manuals' columns, and a Sicredi file whose header date departs from
// its manual completes with that finding as an issue.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CNAB_FIXTURES } from "../../../libs/cobranca/testing/fixtures.js";
import { CnabLayout, IssueSeverity, OcorrenciaState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../../test/support/billing-mesh.js";

const TENANT = "retorno-104-748";
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
});

async function ingest(fixture: string) {
  const c = mesh.billingClient();
  const file = readFileSync(join(CNAB_FIXTURES, fixture));
  let job = (await c.createRetornoJob({ tenant: TENANT, source: { case: "file", value: file }, fileName: fixture })).job!;
  while (!FINAL.includes(job.state)) {
    await new Promise((r) => setTimeout(r, 100));
    job = (await c.getRetornoJob({ tenant: TENANT, jobId: job.jobId })).job!;
  }
  const { occurrences } = await c.listRetornoOccurrences({ tenant: TENANT, jobId: job.jobId, pageSize: 100 });
  return { job, occurrences };
}

describe("Caixa and Sicredi CNAB 400 retornos through CreateRetornoJob", () => {
  it("Caixa's 02 is a baixa (WRITTEN_OFF), with the SIGCB nosso número and the values of its columns", async () => {
    const { job, occurrences } = await ingest("retorno/400/laravel-boleto-104-cef.ret");
    expect(job).toMatchObject({
      state: JobState.COMPLETED,
      banco: "104",
      layout: CnabLayout.CNAB_LAYOUT_400,
      occurrencesTotal: 1,
      duplicates: 0,
      dataGeracao: { year: 2016, month: 10, day: 20 },
      issues: [],
    });
    expect(job.summary.map((s) => [s.state, s.count])).toEqual([[OcorrenciaState.WRITTEN_OFF, 1]]);
    expect(occurrences).toHaveLength(1);
    expect(occurrences[0]).toMatchObject({
      lineNumber: 2,
      banco: "104",
      convenio: "0000000",
      nossoNumero: "14000000000000001",
      seuNumero: "1",
      state: OcorrenciaState.WRITTEN_OFF,
      codigoOcorrencia: "02",
      descricaoOcorrencia: "baixa manual confirmada",
      valorTituloCents: 10000n,
      valorPagoCents: 10000n,
      valorTarifaCents: 0n,
      vencimento: { year: 2016, month: 10, day: 19 },
      dataOcorrencia: { year: 2016, month: 10, day: 20 },
      duplicate: false,
    });
    expect(occurrences[0]!.dataCredito).toBeUndefined();
  });

  it("Sicredi's 02 is an entrada (REGISTERED) of the boleto's nine-digit nosso número; the header date the manual refuses is an issue", async () => {
    const { job, occurrences } = await ingest("retorno/400/laravel-boleto-748-sicredi.ret");
    expect(job).toMatchObject({ state: JobState.COMPLETED, banco: "748", layout: CnabLayout.CNAB_LAYOUT_400, occurrencesTotal: 1, nsa: 1 });
    expect(job.dataGeracao).toBeUndefined();
    expect(job.issues.map((i) => [i.lineNumber, i.severity, i.code])).toEqual([[1, IssueSeverity.WARNING, "DATA_INVALIDA"]]);
    expect(job.summary.map((s) => [s.state, s.count])).toEqual([[OcorrenciaState.REGISTERED, 1]]);
    expect(occurrences[0]).toMatchObject({
      lineNumber: 2,
      banco: "748",
      nossoNumero: "162000015",
      boletoId: "",
      seuNumero: "1",
      state: OcorrenciaState.REGISTERED,
      codigoOcorrencia: "02",
      descricaoOcorrencia: "entrada confirmada",
      valorTituloCents: 10000n,
      valorPagoCents: 10000n,
      vencimento: { year: 2016, month: 11, day: 11 },
      dataOcorrencia: { year: 2016, month: 11, day: 11 },
    });
  });
});
