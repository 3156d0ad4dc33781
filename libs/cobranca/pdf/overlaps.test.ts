// Every bank in every layout, rendered with the longest values the contract allows (its buf.validate
// limits: names 100, street 100, número 20, complemento/bairro/cidade 60, número do documento 25,
// espécie 8, local de pagamento 120, six instruções of 100) and a PIX QR: no text box may overlap another
// (poppler's pdftotext -bbox), nor leave the page.
import { describe, expect, it } from "vitest";
import { BANKS } from "../banks.js";
import { gerarBoleto } from "../campo-livre.js";
import { date } from "../date.js";
import { buildPixDinamico } from "../pix.js";
import { overlaps, wordBoxes } from "../testing/overlaps.js";
import { variantCases } from "../testing/variants.js";
import { type FichaInput, type LayoutPdf, renderizarBoletoPdf, renderizarLotePdf } from "./ficha.js";

/** `n` characters of upper-case words: wider than mixed case, and what CNAB-minded systems send. */
const longText = (n: number, seed = "EMPRESA BRASILEIRA DE COMERCIO E SERVICOS MWM ") =>
  seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const PIX = buildPixDinamico({
  url: "pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
  nome: "EMPRESA EXEMPLO LTDA",
  cidade: "SAO PAULO",
});

function longest(dados: Parameters<typeof gerarBoleto>[0]["dados"]): FichaInput {
  const pessoa = (documento: string) => ({
    nome: longText(100),
    documento,
    endereco: [longText(100, "RUA DOS "), longText(20, "NUMERO "), longText(60, "COMPLEMENTO ")].join(", "),
    bairro: longText(60, "BAIRRO "),
    cep: "01310-100",
    cidade: longText(60, "CIDADE "),
    uf: "SP",
  });
  const ben = pessoa("12.ABC.345/01DE-35");
  return {
    boleto: gerarBoleto({ dados, vencimento: date(2026, 12, 15), valorCentavos: BANKS[dados.banco]?.valorMaximoCentavos ?? 9_999_999_999 }),
    beneficiario: { ...ben, endereco: [ben.endereco, ben.bairro, ben.cep, `${ben.cidade}/${ben.uf}`].join(" - ") },
    pagador: pessoa("529.982.247-25"),
    avalista: pessoa("11.222.333/0001-81"),
    numeroDocumento: longText(25, "NF-2026/"),
    especieDocumento: "DMDMDMDM",
    aceite: "N",
    dataDocumento: date(2026, 11, 29),
    dataProcessamento: date(2026, 11, 29),
    localPagamento: longText(120, "PAGAVEL EM QUALQUER BANCO "),
    instrucoes: Array.from({ length: 6 }, (_, k) => longText(100, `INSTRUCAO ${k + 1} `)),
    pix: PIX,
  };
}

const banks = Object.values(BANKS).map((b) => variantCases().find((c) => c.bank.code === b.code)!);
const LAYOUTS: LayoutPdf[] = ["ficha", "carne"];

describe("no text over text", () => {
  for (const layout of LAYOUTS)
    it.each(banks.map((c) => [c.bank.code, c] as const))(`${layout}, bank %s, longest values`, async (_code, c) => {
      const pdf = await renderizarBoletoPdf(longest(c.dados), { layout });
      expect(overlaps(pdf)).toEqual([]);
    });

  it.each(banks.map((c) => [c.bank.code, c] as const))(
    "ficha and carnê, bank %s, longest values with the bank's own local de pagamento",
    async (_code, c) => {
      const input: FichaInput = { ...longest(c.dados) };
      delete (input as { localPagamento?: string }).localPagamento;
      for (const layout of LAYOUTS) expect(overlaps(await renderizarBoletoPdf(input, { layout }))).toEqual([]);
    },
  );

  it("a carnê of three prints Caixa's own local de pagamento, as the ficha does", async () => {
    const caixa = banks.find((c) => c.bank.code === "104")!;
    const input: FichaInput = { ...longest(caixa.dados) };
    delete (input as { localPagamento?: string }).localPagamento;
    const [carne] = await renderizarLotePdf([input, input, input], { layout: "carne", modo: "unico" });
    const text = wordBoxes(carne!)
      .words.map((w) => w.text)
      .join(" ");
    expect(text).toContain("PREFERENCIALMENTE NAS CASAS LOTÉRICAS");
    expect(text).not.toContain("QUALQUER BANCO");
    expect(overlaps(carne!)).toEqual([]);
  });

  it("the checker sees text printed over text", async () => {
    const PDFDocument = (await import("pdfkit")).default;
    const doc = new PDFDocument({ size: "A4", margin: 0 });
    const chunks: Buffer[] = [];
    doc.on("data", (c: Buffer) => chunks.push(c));
    const done = new Promise<void>((r) => doc.on("end", () => r()));
    doc.font("Helvetica").fontSize(8).text("Beneficiário", 50, 50, { lineBreak: false });
    doc.text("Local", 60, 52, { lineBreak: false });
    doc.text("Vencimento", 200, 50, { lineBreak: false });
    doc.end();
    await done;
    expect(overlaps(new Uint8Array(Buffer.concat(chunks)))).toEqual([expect.stringMatching(/^"Beneficiário"@p1.* overlaps "Local"@p1/)]);
  });
});
