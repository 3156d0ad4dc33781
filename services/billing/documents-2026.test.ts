// Documents of 2026 through the billing service: alphanumeric CNPJs (IN RFB 2.229/2024) for pagador and
// beneficiário are checked by their DVs, printed with their mask on the PDF and kept, letters and all, in
// the CNAB fields that carry them; an alphanumeric número do documento reaches the CNAB 240 files of
// the banks whose files write it like a number.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lerRemessa } from "../../libs/cobranca/index.js";
import { CnabLayout, RemessaTituloSchema } from "../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { TaxIdKind } from "../../libs/gen/malha/common/v1/common_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
let dir: string;
beforeAll(async () => {
  mesh = await startBillingMesh();
  dir = mkdtempSync(join(tmpdir(), "billing-docs-"));
});
afterAll(async () => {
  await mesh?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const TENANT = "docs2026";
const BEN = "12.ABC.345/01DE-35";
const PAG = "A1B2C3D4E5F668";
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

const comCnpjs = (n: number, pag = PAG, over: Parameters<typeof boletoValido>[1] = {}) => {
  const b = boletoValido(n, over);
  b.beneficiario!.document = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: BEN };
  b.pagador!.document = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: pag };
  return b;
};

async function download(url: string): Promise<Buffer> {
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

describe("alphanumeric CNPJs", () => {
  it("a boleto prints them with their mask; a wrong check digit fails its item, naming the field", async () => {
    const c = mesh.billingClient();
    const created = await c.createBoletoJob({
      tenant: TENANT,
      idempotencyKey: "pdf",
      environment: Environment.SANDBOX,
      items: [comCnpjs(1), comCnpjs(2, "A1B2C3D4E5F669")],
    });
    let job = created.job!;
    while (!FINAL.includes(job.state)) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await c.getBoletoJob({ tenant: TENANT, jobId: job.jobId })).job!;
    }
    const items = (await c.listBoletoJobItems({ tenant: TENANT, jobId: job.jobId })).items;
    expect(items.map((i) => i.state)).toEqual([ItemState.COMPLETED, ItemState.FAILED]);
    expect(items[1]!.errors[0]).toMatchObject({ code: "CPF_CNPJ_INVALIDO", field: "pagador.document.number" });
    expect(items[1]!.errors[0]!.message).toMatch(/wrong check digit/);

    const { item } = await c.getBoletoJobItem({ tenant: TENANT, jobId: job.jobId, itemId: items[0]!.itemId });
    const file = join(dir, "a.pdf");
    writeFileSync(file, await download(item!.result!.pdf!.downloadUrl));
    const text = execFileSync("pdftotext", ["-layout", file, "-"]).toString("utf8");
    expect(text).toContain(`CNPJ/CPF ${BEN}`);
    expect(text).toContain("CPF/CNPJ A1.B2C.3D4/E5F6-68");
  });

  it("a remessa keeps their letters in every document field, and takes an alphanumeric número do documento", async () => {
    const c = mesh.billingClient();
    const conta = {
      banco: "001",
      agencia: "1234",
      agenciaDv: "1",
      conta: "12345",
      contaDv: "1",
      carteira: "17",
      variacaoCarteira: "019",
      convenio: "1234567",
    };
    const titulo = create(RemessaTituloSchema, { boleto: comCnpjs(1, PAG, { conta, numeroDocumento: "NF-0001" }) });
    const created = await c.createRemessaJob({
      tenant: TENANT,
      idempotencyKey: "rem",
      environment: Environment.SANDBOX,
      layout: CnabLayout.CNAB_LAYOUT_240,
      titulos: [titulo],
    });
    let job = created.job!;
    while (!FINAL.includes(job.state)) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await c.getRemessaJob({ tenant: TENANT, jobId: job.jobId })).job!;
    }
    expect(job.state).toBe(JobState.COMPLETED);
    const [f] = (await c.listRemessaFiles({ tenant: TENANT, jobId: job.jobId })).files;
    const text = (await download(f!.artifact!.downloadUrl)).toString("latin1");
    const lines = text.split("\r\n");
    // header de arquivo and de lote carry the beneficiário, segment Q the pagador
    expect(lines[0]!.slice(18, 32)).toBe("12ABC34501DE35");
    expect(lines[1]!.slice(18, 33)).toBe("012ABC34501DE35");
    const q = lines.find((l) => l[13] === "Q")!;
    expect(q.slice(18, 33)).toBe(`0${PAG}`);
    const p = lines.find((l) => l[13] === "P")!;
    expect(p.slice(62, 77)).toBe("NF0001".padEnd(15, " "));
    expect(lerRemessa(text).titulos[0]!.numeroDocumento).toBe("NF0001");
  });
});
