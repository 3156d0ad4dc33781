// Every boleto the engine can compute is reachable through the contract: each bank × variant × carteira
// of libs/cobranca/banks.ts goes through CreateBoletoJob on a real billing process, and its barcode must
// be the one the engine computes from the same bank inputs. An engine input with no contract field, or a
// field the service does not pass on, fails here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BANKS, gerarBoleto, type BankVariant, type DadosBancarios } from "../../libs/cobranca/index.js";
import { variantCases } from "../../libs/cobranca/testing/variants.js";
import { selectVariant } from "../../libs/cobranca/campo-livre.js";
import type { Boleto } from "../../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoDaVariante } from "./testing/fixtures.js";

interface Case {
  name: string;
  variant: BankVariant;
  dados: DadosBancarios;
  boleto: Boleto;
}

const VENCIMENTO = { year: 2026, month: 12, day: 15 };
const VALOR = 12_345;

function casesOf(): Case[] {
  return variantCases().map((v, i) => ({
    name: v.name,
    variant: v.variant,
    dados: v.dados,
    boleto: boletoDaVariante(v, i + 1, {
      externalId: `v-${v.bank.code}-${v.variant.id}-${v.carteira ?? "x"}`,
      numeroDocumento: `DOC${i + 1}`,
      valorCents: BigInt(VALOR),
      vencimento: VENCIMENTO,
    }),
  }));
}

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
});

describe("every bank variant through CreateBoletoJob", () => {
  const cases = casesOf();

  it("covers every variant of every bank in the engine's tables", () => {
    for (const c of cases) expect(selectVariant(c.dados).variant.id, c.name).toBe(c.variant.id);
    const covered = new Set(cases.map((c) => `${c.dados.banco}/${c.variant.id}`));
    const all = Object.values(BANKS).flatMap((b) => b.variants.map((v) => `${b.code}/${v.id}`));
    expect([...covered].sort()).toEqual(all.sort());
  });

  it("issues each one with the engine's barcode", async () => {
    const c = mesh.billingClient();
    const created = await c.createBoletoJob({
      tenant: "variants",
      idempotencyKey: "all",
      requestedBy: "t",
      environment: Environment.PRODUCTION,
      items: cases.map((x) => x.boleto),
    });
    const jobId = created.job!.jobId;
    let job = created.job!;
    while (![JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await c.getBoletoJob({ tenant: "variants", jobId })).job!;
    }
    const items = (await c.listBoletoJobItems({ tenant: "variants", jobId, pageSize: 1000 })).items;
    const outcome = Object.fromEntries(
      items.map((it) => [
        it.itemId,
        it.state === ItemState.COMPLETED ? it.result!.codigoBarras : it.errors.map((e) => `${e.code} ${e.field}`).join("; "),
      ]),
    );
    const expected = Object.fromEntries(
      cases.map((x) => [x.boleto.externalId, gerarBoleto({ dados: x.dados, vencimento: VENCIMENTO, valorCentavos: VALOR }).codigoBarras]),
    );
    expect(outcome).toEqual(expected);
    expect(job.state).toBe(JobState.COMPLETED);
  });
});
