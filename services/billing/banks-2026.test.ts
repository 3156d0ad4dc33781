// The banks added in 2026 end to end: one boleto of each through CreateBoletoJob on a real billing
// process, with the engine's barcode, and its PDF printing the bank's code and linha digitável and
// carrying an ITF that decodes to the barcode; BRB's remessa (its own DCB file) through CreateRemessaJob;
// Inter's flow (decision 0033): a remessa without nosso números, the retorno that brings them beside our
// título ids, and the boleto issued from the assigned number.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareZXingModule, readBarcodes } from "zxing-wasm/reader";
import { BANKS, checkCnab, gerarBoleto, lerRemessa, nossoNumero } from "../../libs/cobranca/index.js";
import { fixture } from "../../libs/cobranca/testing/fixtures.js";
import { variantCases } from "../../libs/cobranca/testing/variants.js";
import { CnabLayout, OcorrenciaState, RemessaTituloSchema } from "../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoDaVariante, boletoValido } from "./testing/fixtures.js";

const BANCOS_2026 = ["085", "136", "004", "133", "422", "077", "070", "336"];
const VENCIMENTO = { year: 2026, month: 12, day: 15 };
const TENANT = "banks2026";
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
const require = createRequire(import.meta.url);

let mesh: BillingMesh;
let dir: string;
beforeAll(async () => {
  // the wasm comes from node_modules, never from the network
  const wasm = readFileSync(join(require.resolve("zxing-wasm/reader").replace(/dist[/\\].*$/, ""), "dist/reader/zxing_reader.wasm"));
  await prepareZXingModule({
    overrides: { wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer },
    fireImmediately: true,
  });
  dir = mkdtempSync(join(tmpdir(), "billing-banks-"));
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const run = promisify(execFile);

/** Polls a job every 100 ms until it reaches a final state. */
async function untilFinal<J extends { state: JobState; jobId: string }>(job: J, get: (jobId: string) => Promise<{ job?: J }>): Promise<J> {
  let current = job;
  while (!FINAL.includes(current.state)) {
    await new Promise((r) => setTimeout(r, 100));
    current = (await get(current.jobId)).job!;
  }
  return current;
}

/** The ITF symbols on the first page (rendered at 150 dpi, enough for the 1:3 bars). */
async function itf(pdf: Buffer, name: string): Promise<string[]> {
  const file = join(dir, `${name}.pdf`);
  writeFileSync(file, pdf);
  await run("pdftoppm", ["-r", "150", "-f", "1", "-l", "1", "-png", file, join(dir, name)]);
  const png = readdirSync(dir).find((f) => f.startsWith(`${name}-`) && f.endsWith(".png"))!;
  const found = await readBarcodes(new Blob([readFileSync(join(dir, png))]), { formats: ["ITF"], tryHarder: true });
  return found.map((r) => r.text);
}

describe("banks added in 2026 through CreateBoletoJob", () => {
  it("each bank's boleto completes with the engine's barcode and a PDF whose ITF decodes to it", async () => {
    expect(BANCOS_2026.every((b) => BANKS[b])).toBe(true);
    const cases = variantCases().filter((v) => BANCOS_2026.includes(v.bank.code));
    expect(new Set(cases.map((v) => v.bank.code)).size).toBe(BANCOS_2026.length);
    const c = mesh.billingClient();
    const boletos = cases.map((v, i) =>
      boletoDaVariante(v, i + 1, { externalId: `b-${v.bank.code}-${i}`, valorCents: BigInt(19_990 + i), vencimento: VENCIMENTO }),
    );
    const created = await c.createBoletoJob({ tenant: TENANT, idempotencyKey: "all", environment: Environment.SANDBOX, items: boletos });
    const job = await untilFinal(created.job!, (jobId) => c.getBoletoJob({ tenant: TENANT, jobId }));
    expect(job.state).toBe(JobState.COMPLETED);
    const items = (await c.listBoletoJobItems({ tenant: TENANT, jobId: job.jobId, pageSize: 100 })).items;
    expect(items).toHaveLength(cases.length);
    // the banks' PDFs are checked side by side: the rendering is the slow part
    await Promise.all(
      cases.map(async (v, i) => {
        const listed = items.find((x) => x.itemId === boletos[i]!.externalId)!;
        expect(listed.state, v.name).toBe(ItemState.COMPLETED);
        const esperado = gerarBoleto({ dados: v.dados, vencimento: VENCIMENTO, valorCentavos: 19_990 + i });
        const { item } = await c.getBoletoJobItem({ tenant: TENANT, jobId: job.jobId, itemId: listed.itemId });
        expect(item!.result!.codigoBarras, v.name).toBe(esperado.codigoBarras);
        const pdf = Buffer.from(await (await fetch(item!.result!.pdf!.downloadUrl)).arrayBuffer());
        const file = join(dir, `t${i}.pdf`);
        writeFileSync(file, pdf);
        const text = execFileSync("pdftotext", ["-layout", file, "-"]).toString("utf8");
        expect(text, v.name).toContain(esperado.linhaDigitavelFormatada);
        expect(text, v.name).toContain(v.bank.codeWithDv);
        expect(await itf(pdf, `p${i}`), v.name).toEqual([esperado.codigoBarras]);
      }),
    );
  });
});

describe("BRB's remessa through CreateRemessaJob", () => {
  it("writes its DCB file (records 01 and 02) that reads back to the títulos; a título its record cannot carry fails alone", async () => {
    const c = mesh.billingClient();
    const conta = { banco: "070", agencia: "240", conta: "0044990", carteira: "1" };
    const boletos = [1, 2, 3].map((n) =>
      boletoValido(n, { conta, nossoNumero: `00100000${n}`, especie: n === 3 ? "02" : "21", externalId: `brb-${n}` }),
    );
    const created = await c.createRemessaJob({
      tenant: TENANT,
      idempotencyKey: "brb-remessa",
      environment: Environment.SANDBOX,
      layout: CnabLayout.CNAB_LAYOUT_400,
      titulos: boletos.map((boleto) => create(RemessaTituloSchema, { boleto })),
    });
    const job = await untilFinal(created.job!, (jobId) => c.getRemessaJob({ tenant: TENANT, jobId }));
    expect(job.state).toBe(JobState.PARTIALLY_COMPLETED);
    const failed = await c.listRemessaTitulos({ tenant: TENANT, jobId: job.jobId, state: ItemState.FAILED });
    expect(failed.titulos.map((t) => [t.itemId, t.errors[0]?.code, t.errors[0]?.field])).toEqual([["brb-3", "CAMPO_INVALIDO", "especie"]]);
    const [file] = (await c.listRemessaFiles({ tenant: TENANT, jobId: job.jobId })).files;
    expect(file!.key!.banco).toBe("070");
    const text = Buffer.from(await (await fetch(file!.artifact!.downloadUrl)).arrayBuffer()).toString("latin1");
    expect(checkCnab(text)).toMatchObject({ ok: true, banco: "070", direction: "remessa", warnings: [] });
    const lines = text.split("\r\n").slice(0, -1);
    // header, then per título its record 01 and a record 02 with its first instruction as the message
    expect(lines.map((l) => l.slice(0, 3))).toEqual(["DCB", "010", "02 ", "010", "02 "]);
    expect(lines[0]!.slice(9, 19)).toBe("2400044990");
    const lida = lerRemessa(text);
    expect(lida.titulos.map((t) => [t.id, t.nossoNumero, t.nossoNumeroBrb, t.valorCentavos, t.especie, t.mensagem1])).toEqual(
      [1, 2].map((n) => [
        `brb-${n}`,
        `00100000${n}`,
        nossoNumero({ ...conta, nossoNumero: `00100000${n}` }).completo,
        10_000 + n,
        "21",
        "NAO RECEBER APOS O VENCIMENTO",
      ]),
    );
  });
});

describe("Inter: remessa without nosso número, retorno with the assigned one, then the boleto (decision 0033)", () => {
  const conta = { banco: "077", agencia: "0001", conta: "26245793", contaDv: "8", carteira: "112", convenio: "1234567" };

  it("writes Inter's CNAB 400 with zeros where the nosso número goes, allocates none, and fails a título that brings one", async () => {
    const c = mesh.billingClient();
    // the fourth repeats the first's id: without a nosso número, the título id is what tells them apart
    const boletos = [1, 2, 3, 4].map((n) =>
      boletoValido(n, {
        conta,
        nossoNumero: n === 3 ? "0000000123" : "",
        numeroDocumento: `${500 + n}`,
        externalId: `inter-${n === 4 ? 1 : n}`,
      }),
    );
    const created = await c.createRemessaJob({
      tenant: TENANT,
      idempotencyKey: "inter-remessa",
      environment: Environment.SANDBOX,
      layout: CnabLayout.CNAB_LAYOUT_400,
      titulos: boletos.map((boleto) => create(RemessaTituloSchema, { boleto })),
    });
    const job = await untilFinal(created.job!, (jobId) => c.getRemessaJob({ tenant: TENANT, jobId }));
    expect(job.state).toBe(JobState.PARTIALLY_COMPLETED);
    const titulos = (await c.listRemessaTitulos({ tenant: TENANT, jobId: job.jobId })).titulos;
    expect(titulos.map((t) => [t.itemId, t.state, t.nossoNumero, t.errors[0]?.code, t.errors[0]?.field])).toEqual([
      ["inter-1", ItemState.COMPLETED, "", undefined, undefined],
      ["inter-2", ItemState.COMPLETED, "", undefined, undefined],
      ["inter-3", ItemState.FAILED, "0000000123", "CAMPO_INVALIDO", "nosso_numero"],
      ["inter-1", ItemState.SKIPPED, "", "ITEM_DUPLICADO", "external_id"],
    ]);
    const [file] = (await c.listRemessaFiles({ tenant: TENANT, jobId: job.jobId })).files;
    expect([file!.key!.banco, file!.titulos, file!.registros]).toEqual(["077", 2, 4]);
    const text = Buffer.from(await (await fetch(file!.artifact!.downloadUrl)).arrayBuffer()).toString("latin1");
    expect(checkCnab(text)).toMatchObject({ ok: true, banco: "077", direction: "remessa", warnings: [] });
    const lines = text.split("\r\n").slice(0, -1);
    expect(lines.map((l) => l.slice(0, 1))).toEqual(["0", "1", "1", "9"]);
    expect(lines.slice(1, 3).map((l) => [l.slice(20, 37), l.slice(89, 100)])).toEqual([
      ["11200010262457938", "00000000000"],
      ["11200010262457938", "00000000000"],
    ]);
    expect(lines[3]!.slice(0, 7)).toBe("9000002");
    const lida = lerRemessa(text);
    expect(lida.titulos.map((t) => [t.id, t.nossoNumero, t.numeroDocumento, t.valorCentavos])).toEqual([
      ["inter-1", undefined, "0000000501", 10_001],
      ["inter-2", undefined, "0000000502", 10_002],
    ]);
  });

  it("ingests Inter's retorno with our título id and the number Inter assigned, and issues the boleto from it", async () => {
    const c = mesh.billingClient();
    // BoletoNetCore's Inter retorno (test/fixtures/cnab README) with our título id at 38–62 and an assigned
    // nosso número (10 digits + the DV of Inter's rule, carteira 110 as in the file) at 71–81 and 108–118
    const atribuido = nossoNumero({ banco: "077", agencia: "0001", carteira: "110", convenio: "1", nossoNumero: "0000004321" }).completo;
    const lines = Buffer.from(fixture("retorno/400/boletonetcore-077-inter.ret")).toString("latin1").split("\n");
    const d = lines[1]!;
    lines[1] = d.slice(0, 37) + "inter-1".padEnd(25) + d.slice(62, 70) + atribuido + d.slice(81, 107) + atribuido + d.slice(118);
    expect(lines[1]!.length).toBe(400);
    const file = Buffer.from(lines.join("\n"), "latin1");
    const rjob = await untilFinal(
      (await c.createRetornoJob({ tenant: TENANT, source: { case: "file", value: file }, fileName: "CI400_inter.RET" })).job!,
      (jobId) => c.getRetornoJob({ tenant: TENANT, jobId }),
    );
    expect(rjob).toMatchObject({ state: JobState.COMPLETED, banco: "077", occurrencesTotal: 1 });
    const { occurrences } = await c.listRetornoOccurrences({ tenant: TENANT, jobId: rjob.jobId, boletoId: "inter-1" });
    expect(occurrences.map((o) => [o.boletoId, o.nossoNumero, o.state, o.codigoOcorrencia])).toEqual([
      ["inter-1", atribuido, OcorrenciaState.REGISTERED, "02"],
    ]);

    // the boleto, from the number without its DV, as for any bank whose nosso número the caller gives
    const boletoConta = { banco: "077", agencia: "0001", carteira: "110", convenio: "0262457" };
    const boleto = boletoValido(1, {
      conta: boletoConta,
      nossoNumero: atribuido.slice(0, 10),
      externalId: "inter-1",
      vencimento: VENCIMENTO,
    });
    const job = await untilFinal(
      (await c.createBoletoJob({ tenant: TENANT, idempotencyKey: "inter-boleto", environment: Environment.SANDBOX, items: [boleto] })).job!,
      (jobId) => c.getBoletoJob({ tenant: TENANT, jobId }),
    );
    expect(job.state).toBe(JobState.COMPLETED);
    const { item } = await c.getBoletoJobItem({ tenant: TENANT, jobId: job.jobId, itemId: "inter-1" });
    const esperado = gerarBoleto({
      dados: { ...boletoConta, nossoNumero: atribuido.slice(0, 10) },
      vencimento: VENCIMENTO,
      valorCentavos: 10_001,
    });
    expect(item!.result!.codigoBarras).toBe(esperado.codigoBarras);
    // campo livre: agência + carteira + número da operação + the assigned number with its DV (barcode 34–44)
    expect(esperado.codigoBarras.slice(33)).toBe(atribuido);
    const pdf = Buffer.from(await (await fetch(item!.result!.pdf!.downloadUrl)).arrayBuffer());
    expect(await itf(pdf, "inter")).toEqual([esperado.codigoBarras]);
  });

  it("issues no boleto of Inter or C6 without the number the bank assigned: none is allocated for them", async () => {
    const c = mesh.billingClient();
    const semNumero = [
      boletoValido(1, {
        conta: { banco: "077", agencia: "0001", carteira: "110", convenio: "0262457" },
        nossoNumero: "",
        externalId: "inter-sem",
      }),
      boletoValido(2, { conta: { banco: "336", convenio: "000000012345", carteira: "20" }, nossoNumero: "", externalId: "c6-sem" }),
    ];
    const job = await untilFinal(
      (await c.createBoletoJob({ tenant: TENANT, idempotencyKey: "sem-numero", environment: Environment.SANDBOX, items: semNumero })).job!,
      (jobId) => c.getBoletoJob({ tenant: TENANT, jobId }),
    );
    expect(job.state).toBe(JobState.FAILED);
    const items = (await c.listBoletoJobItems({ tenant: TENANT, jobId: job.jobId })).items;
    expect(items.map((i) => [i.itemId, i.state, i.errors[0]?.code, i.errors[0]?.field])).toEqual([
      ["inter-sem", ItemState.FAILED, "CAMPO_OBRIGATORIO", "nosso_numero"],
      ["c6-sem", ItemState.FAILED, "CAMPO_OBRIGATORIO", "nosso_numero"],
    ]);
  });
});
