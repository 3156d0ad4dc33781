/**
 * PDF of the ficha de compensação (A4: recibo do pagador on top, ficha at the bottom) and a carnê
 * layout (three per A4 page), with pdfkit. Vector ITF barcode (103 × 13 mm, 1:3, quiet zone), optional
 * PIX QR drawn from the qrcode module matrix. CreationDate is fixed from the input, so the same input
 * gives the same bytes. No I/O: returns the bytes.
 */
import PDFDocument from "pdfkit";
import QRCode from "qrcode";
import { parseBarcode, barcodeToLinha, formatLinha } from "../boleto.js";
import type { Boleto } from "../campo-livre.js";
import { BANKS, LOCAL_PAGAMENTO_PADRAO } from "../banks.js";
import { type CalendarDate, assertDate } from "../date.js";
import { CobrancaError, fail } from "../errors.js";
import { parsePix } from "../pix.js";
import { documento, foldAscii } from "../text.js";
import { formatTaxId, stripTaxIdMask } from "../../tax-id/index.js";
import { itfGeometry } from "./itf.js";

export const MM = 72 / 25.4;
/** Barcode geometry (cobranca.md §7.3). */
export const ITF_LENGTH_MM = 103;
export const ITF_HEIGHT_MM = 13;
export const ITF_QUIET_ZONE_MM = 5;

export interface PessoaFicha {
  readonly nome: string;
  readonly documento: string;
  readonly endereco?: string;
  readonly bairro?: string;
  readonly cep?: string;
  readonly cidade?: string;
  readonly uf?: string;
}

export interface FichaInput {
  readonly boleto: Pick<
    Boleto,
    "banco" | "codigoBarras" | "nossoNumeroImpresso" | "agenciaCodigoBeneficiario" | "carteira" | "vencimento" | "valorCentavos"
  > &
    Partial<Pick<Boleto, "bancoComDv" | "linhaDigitavel">>;
  /** Lei 12.039/2009: name, CPF/CNPJ and address of the beneficiário are mandatory. */
  readonly beneficiario: PessoaFicha & { readonly endereco: string };
  readonly pagador: PessoaFicha;
  readonly avalista?: PessoaFicha;
  readonly numeroDocumento: string;
  readonly especieDocumento?: string;
  readonly aceite?: "A" | "N";
  readonly dataDocumento: CalendarDate;
  /** Also the PDF CreationDate (so the bytes are reproducible). */
  readonly dataProcessamento: CalendarDate;
  readonly localPagamento?: string;
  readonly instrucoes?: readonly string[];
  readonly descontoCentavos?: number;
  readonly jurosMultaCentavos?: number;
  readonly valorCobradoCentavos?: number;
  readonly usoBanco?: string;
  /** BR Code from the bank (Bolepix) or a static one: drawn as a QR. */
  readonly pix?: string;
  readonly bancoNome?: string;
}

export type LayoutPdf = "ficha" | "carne";

export interface OpcoesPdf {
  readonly layout?: LayoutPdf;
  /** Validate CPF/CNPJ check digits (default true). */
  readonly validarDocumentos?: boolean;
}

const pad2 = (n: number) => String(n).padStart(2, "0");
const dataBr = (d: CalendarDate | null | undefined) => (d ? `${pad2(d.day)}/${pad2(d.month)}/${d.year}` : "Contra-apresentação");

export function formatarValor(c: number | undefined): string {
  if (c === undefined) return "";
  const s = String(c).padStart(3, "0");
  const int = s.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return `${int},${s.slice(-2)}`;
}

/** CPF/CNPJ with its mask, letters of an alphanumeric CNPJ kept ("12.ABC.345/01DE-35"). */
const formatDoc = (d: string): string => formatTaxId(stripTaxIdMask(d));

/** Text for the standard Helvetica font (WinAnsi): Latin-1 kept, anything else folded or refused. */
function pdfText(s: string | undefined, field: string): string {
  if (s === undefined) return "";
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out += (cp >= 0x20 && cp < 0x7f) || (cp >= 0xa0 && cp <= 0xff) ? ch : foldAscii(ch, field);
  }
  return out;
}

interface Prepared {
  readonly input: FichaInput;
  readonly barcode: string;
  readonly linha: string;
  readonly bancoComDv: string;
  readonly bancoNome: string;
  readonly qr?: QRCode.QRCode;
  readonly t: (s: string | undefined, field: string) => string;
}

function prepare(input: FichaInput, strict: boolean, path: string): Prepared {
  const at = (f: string) => (path ? `${path}.${f}` : f);
  if (!input) fail("CAMPO_OBRIGATORIO", "input is required", path || "input");
  if (!input.boleto) fail("CAMPO_OBRIGATORIO", "boleto is required", at("boleto"));
  let bc: ReturnType<typeof parseBarcode>;
  try {
    bc = parseBarcode(input.boleto.codigoBarras);
  } catch (e) {
    if (e instanceof CobrancaError) fail(e.code, e.message, at("boleto.codigoBarras"));
    throw e;
  }
  const linha = barcodeToLinha(bc.barcode);
  if (input.boleto.linhaDigitavel && input.boleto.linhaDigitavel.replace(/\D/g, "") !== linha)
    fail("CAMPO_INVALIDO", "linha digitável does not match the barcode", at("boleto.linhaDigitavel"));
  if (bc.valorCentavos !== input.boleto.valorCentavos)
    fail("CAMPO_INVALIDO", "value does not match the barcode", at("boleto.valorCentavos"));
  const req = (v: string | undefined, f: string) => {
    if (v === undefined || v === null || String(v).trim() === "") fail("CAMPO_OBRIGATORIO", `${f} is required on the ficha`, at(f));
  };
  req(input.beneficiario?.nome, "beneficiario.nome");
  req(input.beneficiario?.endereco, "beneficiario.endereco");
  req(input.pagador?.nome, "pagador.nome");
  req(input.numeroDocumento, "numeroDocumento");
  req(input.boleto.nossoNumeroImpresso, "boleto.nossoNumeroImpresso");
  documento(input.beneficiario.documento, at("beneficiario.documento"), strict);
  documento(input.pagador.documento, at("pagador.documento"), strict);
  if (input.avalista) documento(input.avalista.documento, at("avalista.documento"), strict);
  assertDate(input.dataDocumento, at("dataDocumento"));
  assertDate(input.dataProcessamento, at("dataProcessamento"));
  let qr: QRCode.QRCode | undefined;
  if (input.pix !== undefined) {
    try {
      parsePix(input.pix);
    } catch (e) {
      if (e instanceof CobrancaError) fail(e.code, e.message, at("pix"));
      throw e;
    }
    qr = QRCode.create(input.pix, { errorCorrectionLevel: "M" });
  }
  const bank = BANKS[bc.banco];
  const t = (s: string | undefined, f: string) => pdfText(s, at(f));
  // check every text once, so a bad character fails before drawing with its field name
  for (const [v, f] of [
    [input.beneficiario.nome, "beneficiario.nome"],
    [input.beneficiario.endereco, "beneficiario.endereco"],
    [input.pagador.nome, "pagador.nome"],
    [input.pagador.endereco, "pagador.endereco"],
    [input.pagador.bairro, "pagador.bairro"],
    [input.pagador.cidade, "pagador.cidade"],
    [input.avalista?.nome, "avalista.nome"],
    [input.numeroDocumento, "numeroDocumento"],
    [input.localPagamento, "localPagamento"],
    [input.bancoNome, "bancoNome"],
  ] as const)
    t(v, f);
  (input.instrucoes ?? []).forEach((s, i) => t(s, `instrucoes[${i}]`));
  return {
    input,
    barcode: bc.barcode,
    linha,
    bancoComDv: input.boleto.bancoComDv ?? bank?.codeWithDv ?? bc.banco,
    bancoNome: input.bancoNome ?? bank?.name ?? `Banco ${bc.banco}`,
    ...(qr ? { qr } : {}),
    t,
  };
}

type Doc = PDFKit.PDFDocument;

function drawItf(doc: Doc, digits: string, x: number, y: number): void {
  const g = itfGeometry(digits, 3);
  const unit = (ITF_LENGTH_MM * MM) / g.units;
  doc.save().fillColor("black");
  for (const [bx, w] of g.bars) doc.rect(x + bx * unit, y, w * unit, ITF_HEIGHT_MM * MM);
  doc.fill().restore();
}

function drawQr(doc: Doc, qr: QRCode.QRCode, x: number, y: number, sizeMm: number): void {
  const n = qr.modules.size;
  const margin = 4;
  const m = (sizeMm * MM) / (n + 2 * margin);
  doc
    .save()
    .rect(x, y, sizeMm * MM, sizeMm * MM)
    .fill("white");
  doc.fillColor("black");
  for (let r = 0; r < n; r++)
    for (let c = 0; c < n; c++) if (qr.modules.get(r, c)) doc.rect(x + (c + margin) * m, y + (r + margin) * m, m, m);
  doc.fill().restore();
}

interface FitOptions {
  readonly size: number;
  readonly bold?: boolean;
  readonly align?: "left" | "right" | "center";
  /** Smallest size the text may shrink to before it is cut with an ellipsis (default 5 pt, or `size`). */
  readonly min?: number;
}

/**
 * One line of text that never leaves its box: drawn at `size`, shrunk down to `min` when too wide, and
 * cut with an ellipsis only if even that does not fit. pdfkit is given no width, so it never wraps a
 * line onto whatever is printed below it.
 */
function fitText(doc: Doc, text: string, x: number, y: number, w: number, o: FitOptions): void {
  doc.font(o.bold ? "Helvetica-Bold" : "Helvetica");
  const min = Math.min(o.min ?? 5, o.size);
  let size = o.size;
  while (size > min && doc.fontSize(size).widthOfString(text) > w) size = Math.max(min, size - 0.25);
  doc.fontSize(size);
  let s = text;
  if (doc.widthOfString(s) > w) {
    while (s.length > 0 && doc.widthOfString(`${s}…`) > w) s = s.slice(0, -1);
    s = `${s.trimEnd()}…`;
  }
  const tw = doc.widthOfString(s);
  const dx = o.align === "right" ? w - tw : o.align === "center" ? (w - tw) / 2 : 0;
  // a shrunk line keeps the baseline of the full-size one
  doc.fillColor("black").text(s, x + Math.max(0, dx), y + (o.size - size) * 0.75, { lineBreak: false });
}

/** One labelled cell: small label on top, value below, both kept inside the cell. */
function cell(
  doc: Doc,
  x: number,
  y: number,
  w: number,
  h: number,
  label: string,
  value: string,
  opts: { align?: "left" | "right"; bold?: boolean; size?: number } = {},
): void {
  doc.lineWidth(0.5).rect(x, y, w, h).stroke();
  fitText(doc, label, x + 1.5, y + 1.2, w - 3, { size: 5.5, min: 4 });
  const size = opts.size ?? 8;
  fitText(doc, value, x + 1.5, y + h - size - 2, w - 3, { size, ...(opts.bold ? { bold: true } : {}), align: opts.align ?? "left" });
}

/** Caixa prints its own text; every other bank the FEBRABAN one, unless the input says otherwise. */
function localPagamento(p: Prepared): string {
  const i = p.input;
  return p.t(i.localPagamento ?? BANKS[i.boleto.banco]?.variants[0]?.localPagamento ?? LOCAL_PAGAMENTO_PADRAO, "localPagamento");
}

function enderecoPessoa(p: PessoaFicha): string {
  const parts = [
    p.endereco,
    p.bairro,
    p.cep ? `CEP ${p.cep.replace(/\D/g, "").replace(/^(\d{5})(\d{3})$/, "$1-$2")}` : undefined,
    [p.cidade, p.uf].filter(Boolean).join("/"),
  ];
  return parts.filter((s) => s && s.trim() !== "").join(" - ");
}

function bankHeader(doc: Doc, p: Prepared, x: number, y: number, w: number, withLinha: boolean): number {
  const h = 9 * MM;
  fitText(doc, p.t(p.bancoNome, "bancoNome"), x, y + h - 12, 45 * MM, { size: 10, bold: true, min: 6 });
  // bank code with DV: bold, ~5 mm characters, between vertical rules
  const cx = x + 46 * MM;
  doc
    .lineWidth(1.2)
    .moveTo(cx, y + 1.5 * MM)
    .lineTo(cx, y + h)
    .moveTo(cx + 20 * MM, y + 1.5 * MM)
    .lineTo(cx + 20 * MM, y + h)
    .stroke();
  fitText(doc, p.bancoComDv, cx, y + h - 19, 20 * MM, { size: 19, bold: true, align: "center" });
  if (withLinha) {
    // 3.5–4.5 mm characters where the width allows; shrink to fit narrower fichas (carnê)
    const text = formatLinha(p.linha);
    const avail = w - 67 * MM;
    doc.font("Helvetica-Bold");
    let size = 11.5;
    while (size > 6 && doc.fontSize(size).widthOfString(text) > avail) size -= 0.25;
    fitText(doc, text, cx + 21 * MM, y + h - size - 1.5, avail, { size, bold: true, align: "right" });
  } else fitText(doc, "Recibo do Pagador", cx + 21 * MM, y + h - 11, w - 67 * MM, { size: 9, bold: true, align: "right" });
  doc
    .lineWidth(1)
    .moveTo(x, y + h)
    .lineTo(x + w, y + h)
    .stroke();
  return y + h;
}

/** The ficha de compensação block (mandatory fields of cobranca.md §7.2); returns its height in pt. */
function drawFicha(doc: Doc, p: Prepared, x: number, y0: number, w: number): void {
  const i = p.input;
  const b = i.boleto;
  const rh = 7.6 * MM;
  const rw = 46 * MM; // right column
  const lw = w - rw;
  let y = bankHeader(doc, p, x, y0, w, true);
  cell(doc, x, y, lw, rh, "Local de pagamento", localPagamento(p));
  cell(doc, x + lw, y, rw, rh, "Vencimento", dataBr(b.vencimento), { align: "right", bold: true });
  y += rh;
  const ben = `${p.t(i.beneficiario.nome, "beneficiario.nome")} - CNPJ/CPF ${formatDoc(i.beneficiario.documento)}`;
  doc
    .lineWidth(0.5)
    .rect(x, y, lw, rh * 1.3)
    .stroke();
  fitText(doc, "Beneficiário", x + 1.5, y + 1.2, lw - 3, { size: 5.5 });
  fitText(doc, ben, x + 1.5, y + 8, lw - 3, { size: 7.5 });
  fitText(doc, p.t(i.beneficiario.endereco, "beneficiario.endereco"), x + 1.5, y + 17, lw - 3, { size: 6.5 });
  cell(doc, x + lw, y, rw, rh * 1.3, "Agência / Código do Beneficiário", b.agenciaCodigoBeneficiario, { align: "right" });
  y += rh * 1.3;
  const c6 = lw / 6;
  cell(doc, x, y, c6 * 1.2, rh, "Data do documento", dataBr(i.dataDocumento));
  cell(doc, x + c6 * 1.2, y, c6 * 1.5, rh, "Nº do documento", p.t(i.numeroDocumento, "numeroDocumento"));
  cell(doc, x + c6 * 2.7, y, c6 * 0.9, rh, "Espécie doc.", i.especieDocumento ?? "DM");
  cell(doc, x + c6 * 3.6, y, c6 * 0.7, rh, "Aceite", i.aceite ?? "N");
  cell(doc, x + c6 * 4.3, y, c6 * 1.7, rh, "Data do processamento", dataBr(i.dataProcessamento));
  cell(doc, x + lw, y, rw, rh, "Nosso número", b.nossoNumeroImpresso, { align: "right" });
  y += rh;
  cell(doc, x, y, c6 * 1.2, rh, "Uso do banco", i.usoBanco ?? "");
  cell(doc, x + c6 * 1.2, y, c6 * 0.9, rh, "Carteira", b.carteira);
  cell(doc, x + c6 * 2.1, y, c6 * 0.9, rh, "Espécie moeda", "R$");
  cell(doc, x + c6 * 3.0, y, c6 * 1.4, rh, "Quantidade", "");
  cell(doc, x + c6 * 4.4, y, c6 * 1.6, rh, "Valor", "");
  cell(doc, x + lw, y, rw, rh, "(=) Valor do documento", formatarValor(b.valorCentavos), { align: "right", bold: true });
  y += rh;
  const ih = rh * 3;
  doc.lineWidth(0.5).rect(x, y, lw, ih).stroke();
  fitText(doc, "Instruções (texto de responsabilidade do beneficiário)", x + 1.5, y + 1.2, lw - 3, { size: 5.5 });
  (i.instrucoes ?? [])
    .slice(0, 6)
    .forEach((s, k) => fitText(doc, p.t(s, `instrucoes[${k}]`), x + 1.5, y + 9 + k * 8.5, lw - 3, { size: 7 }));
  cell(doc, x + lw, y, rw, rh, "(-) Desconto / Abatimento", formatarValor(i.descontoCentavos), { align: "right" });
  cell(doc, x + lw, y + rh, rw, rh, "(+) Juros / Multa", formatarValor(i.jurosMultaCentavos), { align: "right" });
  cell(doc, x + lw, y + 2 * rh, rw, rh, "(=) Valor cobrado", formatarValor(i.valorCobradoCentavos), { align: "right" });
  y += ih;
  const ph = rh * 1.6;
  doc.lineWidth(0.5).rect(x, y, w, ph).stroke();
  fitText(doc, "Pagador", x + 1.5, y + 1.2, w - 3, { size: 5.5 });
  fitText(doc, `${p.t(i.pagador.nome, "pagador.nome")} - CPF/CNPJ ${formatDoc(i.pagador.documento)}`, x + 1.5, y + 8, w - 3, { size: 7.5 });
  fitText(doc, p.t(enderecoPessoa(i.pagador), "pagador.endereco"), x + 1.5, y + 17, w - 3, { size: 7 });
  if (i.avalista)
    fitText(
      doc,
      `Sacador/Avalista: ${p.t(i.avalista.nome, "avalista.nome")} - CPF/CNPJ ${formatDoc(i.avalista.documento)}`,
      x + 1.5,
      y + 26,
      w - 3,
      { size: 6.5 },
    );
  y += ph;
  fitText(doc, "Autenticação Mecânica - Ficha de Compensação", x + w - 70 * MM, y + 1.5, 70 * MM, { size: 6, align: "right" });
  // barcode: 5 mm quiet zone from the left edge of the ficha, 103 × 13 mm
  drawItf(doc, p.barcode, x + ITF_QUIET_ZONE_MM * MM, y + 2.5 * MM);
}

function drawRecibo(doc: Doc, p: Prepared, x: number, y0: number, w: number): void {
  const i = p.input;
  const b = i.boleto;
  const rh = 7.6 * MM;
  let y = bankHeader(doc, p, x, y0, w, false);
  const qrW = p.qr ? 42 * MM : 0;
  const cw = w - qrW;
  doc
    .lineWidth(0.5)
    .rect(x, y, cw, rh * 1.3)
    .stroke();
  fitText(doc, "Beneficiário", x + 1.5, y + 1.2, cw - 3, { size: 5.5 });
  fitText(
    doc,
    `${p.t(i.beneficiario.nome, "beneficiario.nome")} - CNPJ/CPF ${formatDoc(i.beneficiario.documento)}`,
    x + 1.5,
    y + 8,
    cw - 3,
    { size: 7.5 },
  );
  fitText(doc, p.t(i.beneficiario.endereco, "beneficiario.endereco"), x + 1.5, y + 17, cw - 3, { size: 6.5 });
  y += rh * 1.3;
  const c4 = cw / 4;
  cell(doc, x, y, c4, rh, "Agência / Código do Beneficiário", b.agenciaCodigoBeneficiario);
  cell(doc, x + c4, y, c4, rh, "Nosso número", b.nossoNumeroImpresso);
  cell(doc, x + 2 * c4, y, c4, rh, "Nº do documento", p.t(i.numeroDocumento, "numeroDocumento"));
  cell(doc, x + 3 * c4, y, c4, rh, "Vencimento", dataBr(b.vencimento), { align: "right", bold: true });
  y += rh;
  cell(doc, x, y, c4 * 3, rh, "Pagador", `${p.t(i.pagador.nome, "pagador.nome")} - CPF/CNPJ ${formatDoc(i.pagador.documento)}`);
  cell(doc, x + 3 * c4, y, c4, rh, "(=) Valor do documento", formatarValor(b.valorCentavos), { align: "right", bold: true });
  y += rh;
  cell(doc, x, y, cw, rh, "Linha digitável", formatLinha(p.linha), { size: 9 });
  fitText(doc, "Autenticação Mecânica", x + cw - 50 * MM, y + rh + 2, 50 * MM, { size: 6, align: "right" });
  if (p.qr) {
    const qy = y0 + 10 * MM;
    drawQr(doc, p.qr, x + cw + 4 * MM, qy, 36);
    fitText(doc, "Pague com PIX", x + cw, qy + 36.5 * MM, qrW, { size: 7, bold: true, align: "center" });
  }
}

function dashedCut(doc: Doc, x: number, y: number, w: number): void {
  doc
    .save()
    .lineWidth(0.5)
    .dash(3, { space: 3 })
    .moveTo(x, y)
    .lineTo(x + w, y)
    .stroke()
    .undash()
    .restore();
  fitText(doc, "Corte na linha pontilhada", x, y + 2, w, { size: 5.5, align: "right" });
}

function drawPageFicha(doc: Doc, p: Prepared): void {
  doc.addPage({ size: "A4", margin: 0 });
  const x = 10 * MM;
  const w = 190 * MM;
  drawRecibo(doc, p, x, 12 * MM, w);
  dashedCut(doc, x, 100 * MM, w);
  // the ficha goes at the bottom of the A4 sheet (BB-DOC §2.1): 297 − 10 − ~106 mm
  drawFicha(doc, p, x, 181 * MM, w);
}

/** Carnê: stub (canhoto) + ficha, three per page; the ficha keeps the 103 mm barcode and its quiet zone. */
function drawCarne(doc: Doc, p: Prepared, slot: number): void {
  if (slot === 0) doc.addPage({ size: "A4", margin: 0 });
  const y0 = (8 + slot * 96) * MM;
  const i = p.input;
  const b = i.boleto;
  const sx = 8 * MM;
  const sw = 44 * MM;
  const rh = 7.2 * MM;
  fitText(doc, p.bancoComDv, sx, y0 + 2 * MM, sw, { size: 12, bold: true });
  let y = y0 + 9 * MM;
  for (const [label, value] of [
    ["Vencimento", dataBr(b.vencimento)],
    ["Agência / Código do Beneficiário", b.agenciaCodigoBeneficiario],
    ["Nosso número", b.nossoNumeroImpresso],
    ["Nº do documento", p.t(i.numeroDocumento, "numeroDocumento")],
    ["(=) Valor do documento", formatarValor(b.valorCentavos)],
    ["Pagador", p.t(i.pagador.nome, "pagador.nome")],
    ["Beneficiário", p.t(i.beneficiario.nome, "beneficiario.nome")],
  ] as const) {
    cell(doc, sx, y, sw, rh, label, value, { size: 7 });
    y += rh;
  }
  doc
    .save()
    .lineWidth(0.5)
    .dash(2, { space: 2 })
    .moveTo(sx + sw + 2 * MM, y0)
    .lineTo(sx + sw + 2 * MM, y0 + 92 * MM)
    .stroke()
    .undash()
    .restore();
  const fx = sx + sw + 4 * MM;
  const fw = 150 * MM;
  const sub = { ...p };
  doc.save();
  // compact ficha: same fields, smaller rows
  drawFichaCompacta(doc, sub, fx, y0, fw);
  doc.restore();
  if (slot < 2) dashedCut(doc, 8 * MM, y0 + 94 * MM, 194 * MM);
}

function drawFichaCompacta(doc: Doc, p: Prepared, x: number, y0: number, w: number): void {
  const i = p.input;
  const b = i.boleto;
  const rh = 6.8 * MM;
  const rw = 40 * MM;
  const lw = w - rw;
  let y = bankHeader(doc, p, x, y0, w, true);
  cell(doc, x, y, lw, rh, "Local de pagamento", localPagamento(p), { size: 7 });
  cell(doc, x + lw, y, rw, rh, "Vencimento", dataBr(b.vencimento), { align: "right", bold: true, size: 7.5 });
  y += rh;
  // name and CNPJ on one line, the address on its own: one line for all three ran into the next row
  const bh = rh * 1.35;
  doc.lineWidth(0.5).rect(x, y, lw, bh).stroke();
  fitText(doc, "Beneficiário", x + 1.5, y + 1.2, lw - 3, { size: 5.5 });
  fitText(
    doc,
    `${p.t(i.beneficiario.nome, "beneficiario.nome")} - CNPJ/CPF ${formatDoc(i.beneficiario.documento)}`,
    x + 1.5,
    y + 8,
    lw - 3,
    { size: 6.5 },
  );
  fitText(doc, p.t(i.beneficiario.endereco, "beneficiario.endereco"), x + 1.5, y + 16.5, lw - 3, { size: 6 });
  cell(doc, x + lw, y, rw, bh, "Agência / Código do Beneficiário", b.agenciaCodigoBeneficiario, { align: "right", size: 7 });
  y += bh;
  const c5 = lw / 5;
  cell(doc, x, y, c5, rh, "Data do documento", dataBr(i.dataDocumento), { size: 7 });
  cell(doc, x + c5, y, c5 * 1.3, rh, "Nº do documento", p.t(i.numeroDocumento, "numeroDocumento"), { size: 7 });
  cell(doc, x + c5 * 2.3, y, c5 * 0.7, rh, "Espécie doc.", i.especieDocumento ?? "DM", { size: 7 });
  cell(doc, x + c5 * 3, y, c5 * 0.6, rh, "Aceite", i.aceite ?? "N", { size: 7 });
  cell(doc, x + c5 * 3.6, y, c5 * 1.4, rh, "Data processamento", dataBr(i.dataProcessamento), { size: 7 });
  cell(doc, x + lw, y, rw, rh, "Nosso número", b.nossoNumeroImpresso, { align: "right", size: 7 });
  y += rh;
  cell(doc, x, y, c5, rh, "Carteira", b.carteira, { size: 7 });
  cell(doc, x + c5, y, c5, rh, "Espécie moeda", "R$", { size: 7 });
  doc
    .lineWidth(0.5)
    .rect(x + 2 * c5, y, 3 * c5, rh * 2)
    .stroke();
  fitText(doc, "Instruções", x + 2 * c5 + 1.5, y + 1.2, 3 * c5 - 3, { size: 5.5 });
  (i.instrucoes ?? [])
    .slice(0, 3)
    .forEach((s, k) => fitText(doc, p.t(s, `instrucoes[${k}]`), x + 2 * c5 + 1.5, y + 8 + k * 7, 3 * c5 - 3, { size: 6 }));
  cell(doc, x + lw, y, rw, rh, "(=) Valor do documento", formatarValor(b.valorCentavos), { align: "right", bold: true, size: 7.5 });
  cell(doc, x, y + rh, 2 * c5, rh, "Uso do banco", i.usoBanco ?? "", { size: 7 });
  cell(doc, x + lw, y + rh, rw, rh, "(=) Valor cobrado", formatarValor(i.valorCobradoCentavos), { align: "right", size: 7 });
  y += 2 * rh;
  cell(
    doc,
    x,
    y,
    w,
    rh,
    "Pagador",
    `${p.t(i.pagador.nome, "pagador.nome")} - ${formatDoc(i.pagador.documento)} - ${p.t(enderecoPessoa(i.pagador), "pagador.endereco")}`,
    { size: 6.5 },
  );
  y += rh;
  fitText(doc, "Autenticação Mecânica - Ficha de Compensação", x + w - 60 * MM, y + 1, 60 * MM, { size: 5.5, align: "right" });
  drawItf(doc, p.barcode, x + ITF_QUIET_ZONE_MM * MM, y + 2.5 * MM);
}

function creationDate(d: CalendarDate): Date {
  // a calendar date turned into a fixed instant (noon UTC): no clock is read
  return new Date(Date.UTC(d.year, d.month - 1, d.day, 12, 0, 0));
}

async function render(items: readonly FichaInput[], opts: OpcoesPdf, paths: readonly string[]): Promise<Uint8Array> {
  if (items.length === 0) fail("CAMPO_OBRIGATORIO", "at least one boleto", "boletos");
  const strict = opts.validarDocumentos !== false;
  const prepared = items.map((it, k) => prepare(it, strict, paths[k] ?? ""));
  const first = prepared[0]!.input;
  const date = creationDate(first.dataProcessamento);
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    info: { CreationDate: date, ModDate: date, Producer: "malha libs/cobranca", Creator: "malha libs/cobranca", Title: "Boleto" },
  });
  const chunks: Uint8Array[] = [];
  const done = new Promise<Uint8Array>((resolve, reject) => {
    doc.on("data", (c: Uint8Array) => chunks.push(c));
    doc.on("end", () => {
      const n = chunks.reduce((s, c) => s + c.length, 0);
      const out = new Uint8Array(n);
      let o = 0;
      for (const c of chunks) {
        out.set(c, o);
        o += c.length;
      }
      resolve(out);
    });
    doc.on("error", reject);
  });
  try {
    if ((opts.layout ?? "ficha") === "carne") prepared.forEach((p, k) => drawCarne(doc, p, k % 3));
    else prepared.forEach((p) => drawPageFicha(doc, p));
    doc.end();
  } catch (e) {
    if (e instanceof CobrancaError) throw e;
    throw new CobrancaError("PDF_FALHOU", e instanceof Error ? e.message : String(e));
  }
  return done;
}

/** One boleto → one PDF (A4 with recibo and ficha, or a carnê page). */
export function renderizarBoletoPdf(input: FichaInput, opts: OpcoesPdf = {}): Promise<Uint8Array> {
  return render([input], opts, [""]);
}

/** A batch: one PDF per boleto, or one multi-page PDF (`modo: "unico"`). */
export async function renderizarLotePdf(
  inputs: readonly FichaInput[],
  opts: OpcoesPdf & { modo?: "por-boleto" | "unico" } = {},
): Promise<Uint8Array[]> {
  if (!Array.isArray(inputs) || inputs.length === 0) fail("CAMPO_OBRIGATORIO", "at least one boleto", "boletos");
  if (opts.modo === "unico")
    return [
      await render(
        inputs,
        opts,
        inputs.map((_, k) => `boletos[${k}]`),
      ),
    ];
  const out: Uint8Array[] = [];
  for (let k = 0; k < inputs.length; k++) out.push(await render([inputs[k]!], opts, [`boletos[${k}]`]));
  return out;
}
