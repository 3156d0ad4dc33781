// The page of NT 008 Anexo I ("DANFSe v2.0"), one A4 portrait sheet, blocks top to bottom: header,
// identification with the QR code, prestador, tomador, destinatário, intermediário, serviço, ISSQN,
// federal taxes, IBS/CBS, totals, informações complementares. Every block has a fixed height except the
// service description and the informações complementares, which share what is left of the page. An
// absent party (or an absent IBS/CBS group) collapses to its title band with a fixed phrase.
import QRCode from "qrcode";
import { cell, type Doc, hrule, LINE_EM, line, MM, qr, ROW, TITLE, title, wrap } from "./draw.js";
import type { Nota, Pessoa } from "./read.js";

export const PAGE = { width: 595.28, height: 841.89 };
const X = 7 * MM;
const W = PAGE.width - 2 * X;
const TOP = 7 * MM;
const BOTTOM = PAGE.height - 7 * MM;
const COL = W / 4;

const CONSULTA = "https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=";
const AUTENTICIDADE =
  "A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da chave de acesso no portal nacional da NFS-e";

/** The URL the QR code carries for a chave. */
export const consultaUrl = (chave: string): string => `${CONSULTA}${chave}`;

type Cells = readonly (readonly [label: string, value: string, span?: number, bold?: boolean])[];

function row(doc: Doc, y: number, cells: Cells, x0 = X, colW = COL): number {
  let x = x0;
  for (const [label, value, span = 1, bold = false] of cells) {
    const w = colW * span;
    cell(doc, x, y, w, label, value, { bold });
    if (x > x0)
      doc
        .save()
        .lineWidth(0.3)
        .moveTo(x, y)
        .lineTo(x, y + ROW)
        .stroke()
        .restore();
    x += w;
  }
  hrule(doc, x0, y + ROW, colW * 4, 0.3);
  return y + ROW;
}

function block(doc: Doc, y: number, name: string, rows: readonly Cells[]): number {
  title(doc, X, y, W, name);
  let yy = y + TITLE;
  for (const r of rows) yy = row(doc, yy, r);
  return yy;
}

/** An absent party or group: the title band carries the fixed phrase instead. */
function collapsed(doc: Doc, y: number, phrase: string): number {
  title(doc, X, y, W, phrase);
  hrule(doc, X, y + TITLE, W, 0.3);
  return y + TITLE;
}

function partyRows(p: Pessoa): Cells[] {
  return [
    [
      ["CNPJ / CPF / NIF", p.documento],
      ["Inscrição Municipal", p.inscricaoMunicipal],
      ["Telefone", p.telefone],
      ["E-mail", p.email],
    ],
    [
      ["Nome / Nome Empresarial", p.nome, 3],
      ["Município (IBGE) / UF / CEP", p.municipio],
    ],
    [["Endereço", p.endereco, 4]],
  ];
}

function header(doc: Doc, n: Nota): number {
  const h = 15 * MM;
  doc.save().rect(X, TOP, W, h).fill("#f2f2f2").restore();
  line(doc, "NFS-e", X + 2 * MM, TOP + 2 * MM, COL - 4 * MM, { size: 18, face: "bold" });
  line(doc, "Nota Fiscal de Serviço eletrônica", X + 2 * MM, TOP + 10 * MM, COL - 4 * MM, { size: 6.5 });
  const cx = X + COL;
  const cw = 2 * COL;
  line(doc, "DANFSe v2.0", cx, TOP + 1.5 * MM, cw, { size: 11, face: "bold", align: "center" });
  line(doc, "Documento Auxiliar da NFS-e", cx, TOP + 6.2 * MM, cw, { size: 8, align: "center" });
  if (n.homologacao)
    line(doc, "NFS-e SEM VALIDADE JURÍDICA", cx, TOP + 10 * MM, cw, { size: 9, face: "bold", align: "center", color: "#d00000" });
  const rx = X + 3 * COL + 1.5 * MM;
  const rw = COL - 3 * MM;
  if (n.municipioEmissor !== undefined) line(doc, `Município: ${n.municipioEmissor}`, rx, TOP + 1.5 * MM, rw, { size: 7, face: "bold" });
  line(doc, `Ambiente Gerador: ${n.ambGer}`, rx, TOP + 6 * MM, rw, { size: 6 });
  line(doc, `Tipo de Ambiente: ${n.tpAmb}`, rx, TOP + 9.5 * MM, rw, { size: 6 });
  hrule(doc, X, TOP + h, W, 0.8);
  return TOP + h;
}

function identification(doc: Doc, n: Nota, y0: number): number {
  const idW = 3 * COL;
  const colW = idW / 3;
  let y = y0;
  cell(doc, X, y, idW, "CHAVE DE ACESSO DA NFS-e", n.chave, { bold: true, size: 8.4 });
  hrule(doc, X, y + ROW, idW, 0.3);
  y += ROW;
  const rows: Cells[] = [
    [
      ["Número da NFS-e", n.numero],
      ["Competência da NFS-e", n.competencia],
      ["Data e Hora do Processamento", n.dhProc],
    ],
    [
      ["Número da DPS", n.nDps],
      ["Série da DPS", n.serie],
      ["Data e Hora da Emissão da DPS", n.dhEmi],
    ],
    [
      ["Emitente da NFS-e", n.tpEmit],
      ["Situação da NFS-e", n.cStat],
      ["Finalidade", n.finNFSe],
    ],
  ];
  for (const r of rows) {
    let x = X;
    for (const [label, value] of r) {
      cell(doc, x, y, colW, label, value);
      if (x > X)
        doc
          .save()
          .lineWidth(0.3)
          .moveTo(x, y)
          .lineTo(x, y + ROW)
          .stroke()
          .restore();
      x += colW;
    }
    hrule(doc, X, y + ROW, idW, 0.3);
    y += ROW;
  }
  // QR code (≥ 15.2 mm asked; 21 mm here with its 4-module quiet zone inside the white square) and the
  // fixed sentence beside it.
  const h = y - y0;
  const qx = X + idW;
  doc.save().lineWidth(0.3).moveTo(qx, y0).lineTo(qx, y).stroke().restore();
  const side = 21 * MM;
  const code = QRCode.create(consultaUrl(n.chave), { errorCorrectionLevel: "M" });
  qr(doc, code, qx + 0.5 * MM, y0 + (h - side) / 2, side, 4);
  const tx = qx + side + 1 * MM;
  const tw = X + W - tx - 1 * MM;
  const size = 5.2;
  const lead = size * LINE_EM;
  const lines = wrap(AUTENTICIDADE, tw, size, Math.floor((h - 2 * MM) / lead));
  const ty = y0 + (h - lines.length * lead) / 2;
  lines.forEach((l, k) => line(doc, l, tx, ty + k * lead, tw, { size }));
  hrule(doc, X, y, W, 0.8);
  return y;
}

/** CANCELADA / SUBSTITUÍDA across the middle of the page, translucent. */
function watermark(doc: Doc, marca: string): void {
  doc.save().fillOpacity(0.16);
  line(doc, marca, X, PAGE.height / 2 - 40, W, { size: 72, face: "bold", align: "center", color: "#c00000", min: 36 });
  doc.restore();
}

/** Draws the whole page of `n` on `doc` (which has one A4 page and no margins). */
export function drawPage(doc: Doc, n: Nota): void {
  let y = header(doc, n);
  y = identification(doc, n, y);
  const prest = partyRows(n.prestador);
  prest.push([
    ["Simples Nacional na Data de Competência", n.simplesNacional, 2],
    ["Regime de Apuração Tributária pelo SN", n.regimeApuracaoSN, 2],
  ]);
  y = block(doc, y, "PRESTADOR / FORNECEDOR", prest);
  y = n.tomador
    ? block(doc, y, "TOMADOR / ADQUIRENTE", partyRows(n.tomador))
    : collapsed(doc, y, "TOMADOR / ADQUIRENTE NÃO IDENTIFICADO NA NFS-e");
  y = n.destinatario
    ? block(doc, y, "DESTINATÁRIO DA OPERAÇÃO", partyRows(n.destinatario))
    : collapsed(
        doc,
        y,
        n.destinatarioEhTomador
          ? "O DESTINATÁRIO É O PRÓPRIO TOMADOR / ADQUIRENTE DA OPERAÇÃO"
          : "DESTINATÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e",
      );
  y = n.intermediario
    ? block(doc, y, "INTERMEDIÁRIO DA OPERAÇÃO", partyRows(n.intermediario))
    : collapsed(doc, y, "INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e");

  // What is below the service description has a fixed height: measure it first, so that the description
  // and the informações complementares share exactly what is left.
  const s = n.servico;
  const fixedBelow =
    TITLE +
    2 * ROW + // ISSQN
    TITLE +
    (n.federal.pisCofins ? 2 : 1) * ROW +
    (n.ibsCbs ? TITLE + 3 * ROW : TITLE) +
    TITLE +
    2 * ROW + // totals
    TITLE; // informações complementares title
  const textSize = 6.6;
  const lead = textSize * LINE_EM;
  const labelH = 3.2 * MM;
  const serviceFixed = TITLE + ROW + labelH;
  const room = BOTTOM - y - serviceFixed - fixedBelow - 2 * MM;
  const totalLines = Math.max(4, Math.floor(room / lead));
  const textW = W - 2 * 1.3;
  // The Lei 12.741 sentence on its own line(s), then everything else as one run.
  const info = [n.tributosAproximados, n.complementares.join(" | ")].filter((p) => p !== "");
  const infoWant = info.reduce((k, p) => k + wrap(p, textW, textSize, totalLines).length, 0);
  const descWant = wrap(s.descricao, textW, textSize, totalLines).length;
  // Each gets what it needs when both fit; otherwise each gets at least half, and what one leaves goes to the other.
  const half = Math.floor(totalLines / 2);
  const infoLines = Math.min(infoWant, Math.max(totalLines - descWant, totalLines - half));
  const descLines = Math.min(descWant, totalLines - infoLines);

  title(doc, X, y, W, "SERVIÇO PRESTADO");
  y = row(doc, y + TITLE, [
    ["Código de Tributação Nacional", s.cTribNac, 2],
    ["Cód. Trib. Municipal / NBS", `${s.cTribMun} / ${s.cNbs}`],
    ["Local da Prestação", s.localPrestacao],
  ]);
  line(doc, "Descrição do Serviço", X + 1.3, y + 1.2, W - 2.6, { size: 5.2, face: "bold" });
  y += labelH;
  wrap(s.descricao, textW, textSize, descLines).forEach((l, k) => line(doc, l, X + 1.3, y + k * lead, textW, { size: textSize }));
  y += descLines * lead + 1 * MM;
  hrule(doc, X, y, W, 0.3);

  const i = n.issqn;
  y = block(doc, y, "TRIBUTAÇÃO MUNICIPAL (ISSQN)", [
    [
      ["Tipo de Tributação do ISSQN", i.tributacao],
      ["Município de Incidência do ISSQN", i.incidencia, 2],
      ["Regime Especial de Tributação", i.regimeEspecial],
    ],
    [
      ["BC ISSQN", i.bc],
      ["Alíquota Aplicada", i.aliquota],
      ["Retenção do ISSQN", i.retencao],
      ["ISSQN Apurado", i.apurado],
    ],
  ]);
  const fed = n.federal;
  const fedRows: Cells[] = [
    [
      ["IRRF Retido", fed.irrf],
      ["Contribuição Previdenciária Retida", fed.cp],
      ["Contribuições Sociais Retidas (CSLL)", fed.csll],
      ["Retenção PIS / COFINS", fed.retencaoPisCofins],
    ],
  ];
  if (fed.pisCofins)
    fedRows.push([
      ["BC PIS / COFINS", fed.pisCofins.bc],
      ["PIS - Débito Apuração Própria", fed.pisCofins.pis],
      ["COFINS - Débito Apuração Própria", fed.pisCofins.cofins],
      ["CST PIS / COFINS", fed.pisCofins.cst],
    ]);
  y = block(doc, y, "TRIBUTAÇÃO FEDERAL (EXCETO CBS)", fedRows);
  const g = n.ibsCbs;
  y = g
    ? block(doc, y, "TRIBUTAÇÃO IBS / CBS", [
        [
          ["CST / cClassTrib", g.cstClassTrib],
          ["Indicador de Operação", g.indOp],
          ["Localidade de Incidência", g.localidade],
          ["Base de Cálculo IBS / CBS", g.bc],
        ],
        [
          ["Alíquota IBS UF / Efetiva", g.aliqUf],
          ["Alíquota IBS Municipal / Efetiva", g.aliqMun],
          ["Alíquota CBS / Efetiva", g.aliqCbs],
          ["Redutor da Alíquota", g.redutor],
        ],
        [
          ["Valor IBS UF", g.vUf],
          ["Valor IBS Municipal", g.vMun],
          ["Valor Total IBS", g.vIbs],
          ["Valor CBS", g.vCbs],
        ],
      ])
    : collapsed(doc, y, "TRIBUTAÇÃO IBS / CBS NÃO INFORMADA NA NFS-e");
  const t = n.totais;
  y = block(doc, y, "VALOR TOTAL DA NFS-e", [
    [
      ["Valor do Serviço", t.vServ, 1, true],
      ["Desconto Incondicionado", t.descIncond],
      ["Desconto Condicionado", t.descCond],
      ["Total das Retenções", t.retencoes],
    ],
    [
      ["Valor Líquido da NFS-e", t.vLiq, 1, true],
      ["Total IBS / CBS", t.ibsCbs],
      ["Valor Total da NFS-e (Líquido + IBS / CBS)", t.vTotNF, 2, true],
    ],
  ]);

  title(doc, X, y, W, "INFORMAÇÕES COMPLEMENTARES");
  y += TITLE + 0.6 * MM;
  let left = infoLines;
  for (const p of info) {
    if (left <= 0) break;
    const ls = wrap(p, textW, textSize, left);
    ls.forEach((l, k) => line(doc, l, X + 1.3, y + k * lead, textW, { size: textSize }));
    y += ls.length * lead;
    left -= ls.length;
  }
  doc
    .save()
    .lineWidth(0.8)
    .rect(X, TOP, W, BOTTOM - TOP)
    .stroke()
    .restore();
  // Last, so that no band or box hides part of it; it is translucent, so it hides no value either.
  if (n.marca) watermark(doc, n.marca);
}
