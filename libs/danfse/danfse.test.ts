import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { overlaps } from "../cobranca/testing/overlaps.js";
import { formatTaxId, isAlphanumericCnpj } from "../tax-id/index.js";
import type { NoteFacts } from "../../tools/adn-sim/model.js";
import { inRepertoire } from "./embed.js";
import { consultaUrl, DanfseError, type DanfseInput, renderDanfse } from "./index.js";
import { money } from "./format.js";
import { readNota } from "./read.js";
import { eventFor, feed, inputOf, longest, pick, xmlOf } from "./testing/notes.js";
import { pdfPages, pdfText, readQr, redPixels } from "./testing/pdf.js";

const f = feed();
const notes = f.notes;
const v100 = pick(notes, "is of layout 1.00 with a tomador", (n) => n.versao === "1.00" && n.tomador !== undefined);
const ibsFull = pick(notes, "has the full IBS/CBS group and a destinatário", (n) => !!n.ibsCbs?.full && !!n.ibsCbs.destinatario);
const ibsMin = pick(notes, "has the minimal IBS/CBS group", (n) => n.ibsCbs !== undefined && !n.ibsCbs.full);
const interm = pick(notes, "has an intermediário", (n) => n.intermediario !== undefined);
const semTomador = pick(notes, "has no tomador", (n) => n.tomador === undefined);
const alnum = pick(notes, "has an alphanumeric CNPJ", (n) =>
  [n.emitente, n.tomador, n.intermediario, n.ibsCbs?.destinatario].some((p) => p?.doc.kind === "CNPJ" && isAlphanumericCnpj(p.doc.number)),
);

/** Words of `s` as pdftotext separates them, so that a value is found whatever the line breaks around it. */
const words = (s: string) => s.split(/\s+/).filter(Boolean).join(" ");

function expectParties(text: string, n: NoteFacts): void {
  const flat = words(text);
  for (const p of [n.emitente, n.tomador, n.intermediario, n.ibsCbs?.destinatario]) {
    if (!p) continue;
    expect(flat).toContain(formatTaxId(p.doc.number));
    if (p.name) expect(flat).toContain(words(p.name));
  }
}

describe("DANFSe of generated notes", () => {
  for (const [name, n] of [
    ["layout 1.00 without IBS/CBS", v100],
    ["layout 1.01 with the full IBS/CBS group and a destinatário", ibsFull],
    ["layout 1.01 with the minimal IBS/CBS group", ibsMin],
    ["an intermediário", interm],
    ["no tomador", semTomador],
    ["an alphanumeric CNPJ", alnum],
  ] as const) {
    it(`prints the chave, parties, totals and Lei 12.741 line on one page (${name})`, () => {
      const pdf = renderDanfse(inputOf(n));
      expect(pdfPages(pdf)).toBe(1);
      const text = pdfText(pdf);
      const flat = words(text);
      expect(flat).toContain(n.chave);
      expect(flat).toContain("DANFSe v2.0");
      expectParties(text, n);
      expect(flat).toContain(`Valor Líquido da NFS-e ${money(n.vLiq)}`.replace("Valor Líquido da NFS-e ", ""));
      expect(flat).toContain(money(n.vServ));
      if (n.ibsCbs) expect(flat).toContain(money(n.ibsCbs.vTotNF));
      expect(flat).toContain("Totais aproximados dos tributos (Lei 12.741/2012)");
      if (!n.tomador) expect(flat).toContain("TOMADOR / ADQUIRENTE NÃO IDENTIFICADO NA NFS-e");
      if (!n.intermediario) expect(flat).toContain("INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e");
      if (!n.ibsCbs) expect(flat).toContain("TRIBUTAÇÃO IBS / CBS NÃO INFORMADA NA NFS-e");
      expect(flat).not.toMatch(/CANCELADA|SUBSTITUÍDA|SEM VALIDADE/);
      expect(overlaps(pdf)).toEqual([]);
    });
  }

  it("the QR code, at least 15.2 mm wide, decodes to the consulta URL of the chave", async () => {
    for (const n of [v100, alnum]) {
      const qrs = await readQr(renderDanfse(inputOf(n)));
      expect(qrs.map((q) => q.text)).toEqual([consultaUrl(n.chave)]);
      expect(consultaUrl(n.chave)).toBe(`https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${n.chave}`);
      expect(qrs[0]!.sideMm).toBeGreaterThanOrEqual(15.2);
    }
  });

  it("prints NFS-e SEM VALIDADE JURÍDICA in red for tpAmb=2 only", () => {
    const header = { x: 0, y: 0, w: 595, h: 60 };
    const homolog = renderDanfse(inputOf({ ...ibsFull, tpAmb: 2 }));
    expect(words(pdfText(homolog))).toContain("NFS-e SEM VALIDADE JURÍDICA");
    expect(redPixels(homolog, header)).toBeGreaterThan(50);
    const producao = renderDanfse(inputOf({ ...ibsFull, tpAmb: 1 }));
    expect(pdfText(producao)).not.toContain("SEM VALIDADE");
    expect(redPixels(producao, header)).toBe(0);
  });

  it("a cancellation event marks the note CANCELADA and says when", () => {
    const ev = eventFor(f, v100, "101101");
    const text = words(pdfText(renderDanfse(inputOf(v100, [ev]))));
    expect(text).toContain("CANCELADA");
    expect(text).toContain("NFS-e cancelada em");
    expect(text).not.toContain("SUBSTITUÍDA");
  });

  it("a substitution event marks the note SUBSTITUÍDA and names the substitute", () => {
    const ev = eventFor(f, ibsFull, "105102", ibsMin.chave);
    const pdf = renderDanfse(inputOf(ibsFull, [ev, eventFor(f, ibsFull, "202201")]));
    const text = words(pdfText(pdf));
    expect(text).toContain("SUBSTITUÍDA");
    expect(text).toContain(`pela NFS-e de chave ${ibsMin.chave}`);
    expect(text).not.toContain("CANCELADA");
    // The watermark lies under the page on purpose: every other word still has a box of its own.
    expect(overlaps(pdf).filter((o) => !o.includes('"SUBSTITUÍDA"'))).toEqual([]);
  });

  it("no two words overlap on any of a dozen varied notes, in production and homologação", () => {
    const sample = notes.filter((_, i) => i % 9 === 0).slice(0, 12);
    expect(sample.length).toBe(12);
    sample.forEach((n, i) => {
      const pdf = renderDanfse(inputOf({ ...n, tpAmb: i % 2 === 0 ? 1 : 2 }));
      expect(overlaps(pdf), n.chave).toEqual([]);
    });
  });

  it("prints a decomposed accent as the composed letter", () => {
    const n = { ...v100, tomador: { ...v100.tomador!, name: "JOSE\u0301 DA CONCEIC\u0327A\u0303O" } };
    expect(words(pdfText(renderDanfse(inputOf(n))))).toContain("JOSÉ DA CONCEIÇÃO");
  });

  it("informational events leave the note unmarked", () => {
    const text = pdfText(renderDanfse(inputOf(interm, [eventFor(f, interm, "202201"), eventFor(f, interm, "101103")])));
    expect(text).not.toMatch(/CANCELADA|SUBSTITUÍDA/);
  });
});

describe("the longest values the XSD allows", () => {
  const n = longest(ibsFull);
  const pdf = renderDanfse(inputOf(n, [eventFor(f, n, "101101")]));
  const text = words(pdfText(pdf));

  it("stay inside their boxes: no two words overlap, one page, values cut with …", () => {
    expect(pdfPages(pdf)).toBe(1);
    expect(overlaps(pdf).filter((o) => !o.includes('"CANCELADA"'))).toEqual([]);
    expect(text).toContain("…");
    expect(text).not.toContain(n.prestador.name.trim());
  });

  it("still print the chave, the documents (alphanumeric CNPJs), the totals and the Lei 12.741 amounts", () => {
    expect(text).toContain(n.chave);
    for (const p of [n.emitente, n.prestador, n.tomador!, n.intermediario!, n.ibsCbs!.destinatario!])
      expect(text).toContain(formatTaxId(p.doc.number));
    expect(text).toContain("R$ 999.999.999.999.999,99");
    expect(text).toContain("Federais R$ 999.999.999.999.999,99; Estaduais R$ 999.999.999.999.999,99; Municipais R$ 999.999.999.999.999,99");
    expect(text).toContain("CANCELADA");
  });
});

describe("deterministic output", () => {
  it("gives the same bytes for the same input, on both font paths", () => {
    const withEvent: DanfseInput = inputOf(ibsFull, [eventFor(f, ibsFull, "101101")]);
    expect(Buffer.from(renderDanfse(withEvent)).equals(Buffer.from(renderDanfse(withEvent)))).toBe(true);
    // A character outside the shared subset (embed.ts) takes pdfkit's per-document subset, and prints.
    const greek = { ...v100, tomador: { ...v100.tomador!, name: "ΩMEGA ΣERVIÇOS ŁTDA" } };
    expect(inRepertoire(greek.tomador.name)).toBe(false);
    const a = renderDanfse(inputOf(greek));
    expect(Buffer.from(a).equals(Buffer.from(renderDanfse(inputOf(greek))))).toBe(true);
    expect(words(pdfText(a))).toContain("ΩMEGA ΣERVIÇOS ŁTDA");
  });

  it("differs when the note differs", () => {
    expect(Buffer.from(renderDanfse(inputOf(v100))).equals(Buffer.from(renderDanfse(inputOf(ibsFull))))).toBe(false);
  });
});

describe("what the page reads from the XML", () => {
  it("prints - for absent values and the Lei 12.741 amounts when given", () => {
    const n = readNota(inputOf({ ...semTomador, totTrib: { kind: "percent", fedBps: 1345, estBps: 0, munBps: 500 } }));
    expect(n.tomador).toBeUndefined();
    expect(n.prestador.telefone).toBe("-");
    expect(n.federal.irrf).toBe("-");
    expect(n.tributosAproximados).toBe(
      "Totais aproximados dos tributos (Lei 12.741/2012): Federais 13,45%; Estaduais 0,00%; Municipais 5,00%",
    );
  });

  it("prints the PIS/COFINS own-debit line only for competência up to 2026", () => {
    const tribFed = { piscofins: { cst: "01", vBC: 10000n, pPisBps: 165, pCofinsBps: 760, vPis: 165n, vCofins: 760n, tpRet: 2 } };
    expect(readNota(inputOf({ ...v100, tribFed })).federal.pisCofins?.pis).toBe("R$ 1,65");
    const later = { ...v100, tribFed, dCompet: "2027-01-15" };
    expect(readNota(inputOf(later)).federal.pisCofins).toBeUndefined();
    expect(pdfText(renderDanfse(inputOf(later)))).not.toContain("PIS - Débito");
  });

  it("hides the issuing municipality when the service item is 99", () => {
    expect(readNota(inputOf({ ...v100, cTribNac: "990101" })).municipioEmissor).toBeUndefined();
    expect(readNota(inputOf(v100)).municipioEmissor).toContain(v100.xLocEmi);
  });
});

describe("a note that cannot be rendered", () => {
  const fails = (input: DanfseInput): DanfseError => {
    try {
      renderDanfse(input);
    } catch (e) {
      expect(e).toBeInstanceOf(DanfseError);
      return e as DanfseError;
    }
    throw new Error("rendered a note that should have been refused");
  };
  const xml = (n: NoteFacts) => new TextDecoder().decode(xmlOf(n));
  const bytes = (s: string) => new TextEncoder().encode(s);

  it("names the field of the fault", () => {
    expect(fails({ xml: bytes("<NFSe><infNFSe"), events: [] }).field).toBe("xml");
    expect(
      fails({
        xml: bytes(
          xml(v100)
            .replace(/<NFSe /, "<Outra ")
            .replace("</NFSe>", "</Outra>"),
        ),
        events: [],
      }).field,
    ).toBe("NFSe");
    const badToma = fails({ xml: bytes(xml(v100).replace(/(<toma>\s*<C[PN][PJ]{1,2}>)[^<]+/, "$1123")), events: [] });
    expect(badToma.field).toMatch(/^NFSe\/infNFSe\/DPS\/infDPS\/toma\/(CNPJ|CPF)$/);
    const badAmount = fails(
      inputOf({ ...v100, tribFed: { vRetIRRF: 100n } }, []).xml
        ? { xml: bytes(xml({ ...v100, tribFed: { vRetIRRF: 100n } }).replace("<vRetIRRF>1.00", "<vRetIRRF>1,00")), events: [] }
        : inputOf(v100),
    );
    expect(badAmount.field).toBe("NFSe/infNFSe/DPS/infDPS/valores/trib/tribFed/vRetIRRF");
    expect(badAmount.reason).toContain("amount");
    const noEmit = fails({ xml: bytes(xml(v100).replace(/<emit>[\s\S]*<\/emit>/, "")), events: [] });
    expect(noEmit.field).toBe("NFSe/infNFSe/emit");
  });

  it("refuses events that are not this note's or not of the type given", () => {
    const other = eventFor(f, ibsFull, "101101");
    expect(fails(inputOf(v100, [other])).field).toBe("events[0]/infPedReg/chNFSe");
    const mislabeled = { ...eventFor(f, v100, "101101"), tipo: "105102" };
    expect(fails(inputOf(v100, [eventFor(f, v100, "202201"), mislabeled])).field).toBe("events[1]/tipo");
    expect(fails(inputOf(v100, [{ tipo: "e101101", xml: eventFor(f, v100, "101101").xml }])).field).toBe("events[0]/tipo");
    expect(fails(inputOf(v100, [{ tipo: "101101", xml: bytes("<evento>") }])).field).toBe("events[0]/xml");
  });
});

describe("purity", () => {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const sources = readdirSync(here)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts") && statSync(join(here, f)).isFile())
    .map((f) => [f, readFileSync(join(here, f), "utf8")] as const);

  it("reads no clock, draws no randomness and does I/O only to load its fonts", () => {
    for (const [file, src] of sources) {
      expect(src, file).not.toMatch(/Date\.now\(|new Date\(\)|Math\.random|performance\.now|process\.env/);
      if (file !== "font.ts") expect(src, file).not.toMatch(/from "node:(fs|net|http|https|child_process|os|path)"/);
    }
  });

  it("every fixed text of the page is in the shared font subset", () => {
    const layout = sources.find(([file]) => file === "layout.ts")![1];
    const literals = [...layout.matchAll(/"([^"\\]*)"/g)].map((m) => m[1]!);
    expect(literals.length).toBeGreaterThan(50);
    for (const s of literals) expect(inRepertoire(s), s).toBe(true);
  });
});
