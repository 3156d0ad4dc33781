// The PDFs the billing service issues never print text over text: one boleto per bank with the longest
// values the contract accepts goes through CreateBoletoJob, and every PDF downloaded from the artifacts
// service is checked with poppler's pdftotext -bbox (libs/cobranca/testing/overlaps.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BANKS } from "../../libs/cobranca/index.js";
import { overlaps } from "../../libs/cobranca/testing/overlaps.js";
import { variantCases } from "../../libs/cobranca/testing/variants.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { TaxIdKind } from "../../libs/gen/malha/common/v1/common_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoDaVariante } from "./testing/fixtures.js";

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
});

/** `n` characters of upper-case words (the limits are the protos' buf.validate max_len). */
const longText = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const party = (document: { kind: TaxIdKind; number: string }) => ({
  name: longText(100, "EMPRESA BRASILEIRA DE COMERCIO MWM "),
  document,
  address: {
    street: longText(100, "AVENIDA DOS "),
    number: longText(20, "KM "),
    complement: longText(60, "BLOCO "),
    district: longText(60, "BAIRRO "),
    city: longText(60, "CIDADE "),
    uf: "SP",
    cep: "01310-100",
  },
  email: `${"a".repeat(240)}@example.com`,
});

describe("issued PDFs", () => {
  it("every bank, longest contract values: no two text boxes overlap", async () => {
    const banks = Object.values(BANKS).map((b) => variantCases().find((c) => c.bank.code === b.code)!);
    const items = banks.map((v, i) =>
      boletoDaVariante(v, i + 1, {
        externalId: `pdf-${v.bank.code}`,
        numeroDocumento: longText(25, "NF-2026/"),
        seuNumero: v.dados.seuNumero ?? longText(25, "SEU-"),
        especie: "DMDMDMDM",
        valorCents: BigInt(BANKS[v.bank.code]!.valorMaximoCentavos ?? 9_999_999_999),
        localPagamento: longText(120, "PAGAVEL EM QUALQUER BANCO "),
        instrucoes: Array.from({ length: 6 }, (_, k) => longText(100, `INSTRUCAO ${k + 1} `)),
        pagador: party({ kind: TaxIdKind.CPF, number: "529.982.247-25" }),
        beneficiario: party({ kind: TaxIdKind.CNPJ, number: "12.ABC.345/01DE-35" }),
        sacadorAvalista: party({ kind: TaxIdKind.CNPJ, number: "11.222.333/0001-81" }),
        pix: { kind: { case: "chaveEstatica", value: { chave: "cobranca@example.com.br", txid: longText(25, "TX") } } },
      }),
    );
    const c = mesh.billingClient();
    const created = await c.createBoletoJob({ tenant: "pdf", idempotencyKey: "longest", environment: Environment.PRODUCTION, items });
    let job = created.job!;
    while (![JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) {
      await new Promise((r) => setTimeout(r, 200));
      job = (await c.getBoletoJob({ tenant: "pdf", jobId: job.jobId })).job!;
    }
    const listed = (await c.listBoletoJobItems({ tenant: "pdf", jobId: job.jobId })).items;
    expect(listed.map((i) => [i.itemId, i.state, i.errors.map((e) => `${e.code} ${e.field}`)])).toEqual(
      items.map((b) => [b.externalId, ItemState.COMPLETED, []]),
    );
    const found: Record<string, string[]> = {};
    for (const it of listed) {
      const { item } = await c.getBoletoJobItem({ tenant: "pdf", jobId: job.jobId, itemId: it.itemId });
      const pdf = new Uint8Array(await (await fetch(item!.result!.pdf!.downloadUrl)).arrayBuffer());
      found[it.itemId] = overlaps(pdf);
    }
    expect(found).toEqual(Object.fromEntries(items.map((b) => [b.externalId, []])));
  });
});
