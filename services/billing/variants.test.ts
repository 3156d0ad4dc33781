// Every boleto the engine can compute is reachable through the contract: each bank × variant × carteira
// of libs/cobranca/banks.ts goes through CreateBoletoJob on a real billing process, and its barcode must
// be the one the engine computes from the same bank inputs. An engine input with no contract field, or a
// field the service does not pass on, fails here.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BANKS, gerarBoleto, type BankVariant, type DadosBancarios } from "../../libs/cobranca/index.js";
import { variantCases } from "../../libs/cobranca/test/variants.js";
import { selectVariant } from "../../libs/cobranca/campo-livre.js";
import { BoletoSchema, ContaCobrancaSchema, type Boleto, type ContaCobranca } from "../../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoValido } from "./fixtures.js";

/** Where the contract holds each engine input: a ContaCobranca field or a Boleto field. */
const CONTA_FIELDS = ["convenio", "carteira", "agencia", "conta", "posto", "modalidade", "ano", "byteGeracao", "codigoCliente", "tipoCobranca", "emissao", "ios", "produto"] as const;
const BOLETO_FIELDS = ["nossoNumero", "seuNumero", "parcela"] as const;

type ContaField = (typeof CONTA_FIELDS)[number];
type BoletoField = (typeof BOLETO_FIELDS)[number];

interface Case {
  name: string;
  variant: BankVariant;
  dados: DadosBancarios;
  boleto: Boleto;
}

const VENCIMENTO = { year: 2026, month: 12, day: 15 };
const VALOR = 12_345;

function casesOf(): Case[] {
  return variantCases().map((v, i) => {
    const conta = create(ContaCobrancaSchema, { banco: v.bank.code });
    const boleto = boletoValido(i + 1, { externalId: `v-${v.bank.code}-${v.variant.id}-${v.carteira ?? "x"}`, conta, nossoNumero: "", numeroDocumento: `DOC${i + 1}`, valorCents: BigInt(VALOR), vencimento: VENCIMENTO });
    for (const [name, value] of Object.entries(v.dados)) {
      if (name === "banco") continue;
      if ((CONTA_FIELDS as readonly string[]).includes(name)) (conta as unknown as Record<ContaField, string>)[name as ContaField] = value as string;
      else if ((BOLETO_FIELDS as readonly string[]).includes(name)) (boleto as unknown as Record<BoletoField, string>)[name as BoletoField] = value as string;
      else throw new Error(`bank ${v.bank.code} variant ${v.variant.id}: the engine input ${name} has no field in the contract`);
    }
    return { name: v.name, variant: v.variant, dados: v.dados, boleto };
  });
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
    const created = await c.createBoletoJob({ tenant: "variants", idempotencyKey: "all", requestedBy: "t", environment: Environment.PRODUCTION, items: cases.map((x) => x.boleto) });
    const jobId = created.job!.jobId;
    let job = created.job!;
    while (![JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await c.getBoletoJob({ tenant: "variants", jobId })).job!;
    }
    const items = (await c.listBoletoJobItems({ tenant: "variants", jobId, pageSize: 1000 })).items;
    const outcome = Object.fromEntries(
      items.map((it) => [it.itemId, it.state === ItemState.COMPLETED ? it.result!.codigoBarras : it.errors.map((e) => `${e.code} ${e.field}`).join("; ")]),
    );
    const expected = Object.fromEntries(
      cases.map((x) => [x.boleto.externalId, gerarBoleto({ dados: x.dados, vencimento: VENCIMENTO, valorCentavos: VALOR }).codigoBarras]),
    );
    expect(outcome).toEqual(expected);
    expect(job.state).toBe(JobState.COMPLETED);
  });
});

// Keeps the field lists honest: every name is a real field of the generated types.
const _conta: Record<ContaField, unknown> = {} as Pick<ContaCobranca, ContaField>;
const _boleto: Record<BoletoField, unknown> = {} as Pick<Boleto, BoletoField>;
void _conta;
void _boleto;
void BoletoSchema;
