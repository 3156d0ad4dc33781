import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareZXingModule, readBarcodes } from "zxing-wasm/reader";
import { gerarBoleto } from "../campo-livre.js";
import { date } from "../date.js";
import { CobrancaError } from "../errors.js";
import { buildPixDinamico } from "../pix.js";
import { type FichaInput, renderizarBoletoPdf, renderizarLotePdf } from "./ficha.js";
import { itfGeometry } from "./itf.js";

const require = createRequire(import.meta.url);
let dir = "";

beforeAll(async () => {
  // the wasm comes from node_modules, never from the network (cobranca.md §9)
  const wasm = readFileSync(join(require.resolve("zxing-wasm/reader").replace(/dist[/\\].*$/, ""), "dist/reader/zxing_reader.wasm"));
  await prepareZXingModule({
    overrides: { wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer },
    fireImmediately: true,
  });
  dir = mkdtempSync(join(tmpdir(), "cobranca-pdf-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const boleto = gerarBoleto({
  dados: { banco: "237", agencia: "1234", carteira: "09", nossoNumero: "123", conta: "0012345" },
  vencimento: date(2026, 12, 15),
  valorCentavos: 15000,
});
const PIX = buildPixDinamico({
  url: "pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
  nome: "EMPRESA EXEMPLO LTDA",
  cidade: "SAO PAULO",
});

const input = (over: Partial<FichaInput> = {}): FichaInput => ({
  boleto,
  beneficiario: {
    nome: "Empresa Exemplo Ltda",
    documento: "11.222.333/0001-81",
    endereco: "Av. Paulista, 1000 - Bela Vista - São Paulo/SP - CEP 01310-100",
  },
  pagador: {
    nome: "José da Conceição",
    documento: "529.982.247-25",
    endereco: "Rua das Flores, 12",
    bairro: "Centro",
    cep: "01001000",
    cidade: "São Paulo",
    uf: "SP",
  },
  numeroDocumento: "NF-2026/0042",
  especieDocumento: "DM",
  aceite: "N",
  dataDocumento: date(2026, 11, 29),
  dataProcessamento: date(2026, 11, 29),
  instrucoes: ["Não receber após 30 dias do vencimento.", "Multa de 2% após o vencimento; juros de 1% ao mês."],
  ...over,
});

async function decode(pdf: Uint8Array, name: string): Promise<Array<{ format: string; text: string }>[]> {
  const file = join(dir, `${name}.pdf`);
  writeFileSync(file, pdf);
  execFileSync("pdftoppm", ["-r", "200", "-png", file, join(dir, name)]);
  const pages = readdirSync(dir)
    .filter((f) => f.startsWith(`${name}-`) && f.endsWith(".png"))
    .sort();
  const out = [];
  for (const p of pages) {
    const png = readFileSync(join(dir, p));
    const res = await readBarcodes(new Blob([png]), { formats: ["ITF", "QRCode"], tryHarder: true, maxNumberOfSymbols: 8 });
    out.push(res.map((r) => ({ format: r.format, text: r.text })));
  }
  return out;
}

describe("ITF geometry", () => {
  it("44 digits at 1:3 are 405 narrow units, 22 pairs + start/stop = 2 + 110 + 2 bars", () => {
    const g = itfGeometry(boleto.codigoBarras);
    expect(g.units).toBe(405);
    expect(g.bars).toHaveLength(2 + 22 * 5 + 2);
  });
});

describe("PDF of the ficha de compensação", () => {
  it("is byte-identical for the same input (fixed CreationDate)", async () => {
    const a = await renderizarBoletoPdf(input({ pix: PIX }));
    const b = await renderizarBoletoPdf(input({ pix: PIX }));
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect(Buffer.from(a.slice(0, 5)).toString()).toBe("%PDF-");
  });

  it("rasterised at 200 dpi, the barcode gives back the 44 digits and the QR the BR Code", async () => {
    const pages = await decode(await renderizarBoletoPdf(input({ pix: PIX })), "ficha");
    expect(pages).toHaveLength(1);
    const found = pages[0]!;
    expect(found.find((r) => r.format === "ITF")?.text).toBe(boleto.codigoBarras);
    expect(found.find((r) => r.format === "QRCode")?.text).toBe(PIX);
  });

  it("prints the mandatory fields of cobranca.md §7.2 (text layer read back with pdftotext)", async () => {
    const file = join(dir, "texto.pdf");
    writeFileSync(
      file,
      await renderizarBoletoPdf(input({ pix: PIX, avalista: { nome: "Avalista Garantidor SA", documento: "11222333000181" } })),
    );
    const text = execFileSync("pdftotext", ["-layout", file, "-"]).toString("utf8");
    for (const s of [
      "Banco Bradesco S.A.",
      "237-2",
      boleto.linhaDigitavelFormatada,
      "Local de pagamento",
      "Vencimento",
      "15/12/2026",
      "Beneficiário",
      "Empresa Exemplo Ltda",
      "11.222.333/0001-81",
      "Av. Paulista, 1000",
      "Agência / Código do Beneficiário",
      "Data do documento",
      "Nº do documento",
      "NF-2026/0042",
      "Espécie doc.",
      "Aceite",
      "Data do processamento",
      "Nosso número",
      boleto.nossoNumeroImpresso,
      "Espécie moeda",
      "(=) Valor do documento",
      "150,00",
      "Instruções",
      "Não receber após 30 dias do vencimento.",
      "Pagador",
      "José da Conceição",
      "529.982.247-25",
      "CEP 01001-000",
      "Sacador/Avalista: Avalista Garantidor SA",
      "Autenticação Mecânica - Ficha de Compensação",
      "Recibo do Pagador",
      "Pague com PIX",
    ])
      expect(text, s).toContain(s);
  });

  it("carnê layout and multi-page batch: every barcode decodes", async () => {
    const others = [1, 2, 3, 4].map((k) =>
      gerarBoleto({
        dados: { banco: "341", carteira: "109", nossoNumero: String(1000 + k), agencia: "0810", conta: "53678" },
        vencimento: date(2027, k, 10),
        valorCentavos: 9990 * k,
      }),
    );
    const [pdf] = await renderizarLotePdf(
      others.map((b) => input({ boleto: b })),
      { modo: "unico", layout: "carne" },
    );
    const pages = await decode(pdf!, "carne");
    expect(pages).toHaveLength(2);
    const itf = pages
      .flat()
      .filter((r) => r.format === "ITF")
      .map((r) => r.text)
      .sort();
    expect(itf).toEqual(others.map((b) => b.codigoBarras).sort());
    const each = await renderizarLotePdf(others.map((b) => input({ boleto: b })));
    expect(each).toHaveLength(4);
  });

  it("refuses missing mandatory fields and bad codes with the field name", async () => {
    const err = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        expect(e).toBeInstanceOf(CobrancaError);
        return [(e as CobrancaError).code, (e as CobrancaError).field];
      }
      return null;
    };
    expect(await err(renderizarBoletoPdf(input({ beneficiario: { nome: "X", documento: "11222333000181", endereco: "" } })))).toEqual([
      "CAMPO_OBRIGATORIO",
      "beneficiario.endereco",
    ]);
    expect(await err(renderizarBoletoPdf(input({ pagador: { nome: "X", documento: "123" } })))).toEqual([
      "CPF_CNPJ_INVALIDO",
      "pagador.documento",
    ]);
    expect(
      await err(renderizarBoletoPdf(input({ boleto: { ...boleto, codigoBarras: boleto.codigoBarras.replace(/^(.{4})./, "$10") } }))),
    ).toEqual(["DV_INVALIDO", "boleto.codigoBarras"]);
    expect(await err(renderizarBoletoPdf(input({ pix: PIX.slice(0, -1) + "0" })))).toEqual(["PIX_CRC_INVALIDO", "pix"]);
    expect(
      await err(renderizarLotePdf([input(), input({ pagador: { nome: "漢字", documento: "52998224725" } })], { modo: "unico" })),
    ).toEqual(["TEXTO_NAO_CONVERSIVEL", "boletos[1].pagador.nome"]);
  });
});
