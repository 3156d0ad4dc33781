// The ADN's answers: the PascalCase JSON envelope (adn.md §2.1) and the HTML pages of 429 and 5xx.
import type { ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import type { FeedEntry } from "./model.js";
import type { ItemFault } from "./switches.js";

export interface ErroJson {
  Mensagem: Record<string, never>;
  Parametros: null;
  Codigo: string;
  Descricao: string;
  Complemento: null;
}

export function erro(codigo: string, descricao: string): ErroJson {
  return { Mensagem: {}, Parametros: null, Codigo: codigo, Descricao: descricao, Complemento: null };
}

/** "2026-03-12T08:00:00.1234567-03:00": seven fraction digits and an offset, as the ADN sends. */
function dataHoraProcessamento(): string {
  const d = new Date(Date.now() - 3 * 3600_000).toISOString();
  return `${d.slice(0, 23)}${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}-03:00`;
}

export function envelope(status: string, tipoAmbiente: string, items: object[], erros: ErroJson[] = []) {
  return {
    StatusProcessamento: status,
    LoteDFe: items,
    Alertas: [],
    Erros: erros,
    TipoAmbiente: tipoAmbiente,
    VersaoAplicativo: "1.0.0.0",
    DataHoraProcessamento: dataHoraProcessamento(),
  };
}

let bomb: { size: number; b64: string } | undefined;
function bombPayload(size: number): string {
  if (bomb?.size !== size) {
    const xml = Buffer.alloc(size, 0x20);
    xml.write('<?xml version="1.0" encoding="UTF-8"?><NFSe>');
    bomb = { size, b64: gzipSync(xml, { level: 9 }).toString("base64") };
  }
  return bomb.b64;
}

/** A note's XML with one value the layout does not allow. */
function poisoned(xml: string, fault: ItemFault): string {
  switch (fault) {
    case "poison-long-description":
      return xml.replace(/<xDescServ>[^<]*<\/xDescServ>/, `<xDescServ>${"Servico ".repeat(8750)}</xDescServ>`);
    case "poison-huge-rate":
      return xml.replace(/<pAliqAplic>[^<]*<\/pAliqAplic>/, "").replace("<vLiq>", "<pAliqAplic>1000.00</pAliqAplic><vLiq>");
    case "poison-lowercase-cnpj":
      return xml.replace(/<CNPJ>[^<]*<\/CNPJ>/, "<CNPJ>12abc34501de35</CNPJ>");
    case "poison-long-name":
      return xml.replace(/<xNome>[^<]*<\/xNome>/, `<xNome>${"N".repeat(301)}</xNome>`);
    default:
      return xml.includes("<vTotNF>")
        ? xml.replace(/<vTotNF>[^<]*<\/vTotNF>/, "<vTotNF>nove reais</vTotNF>")
        : xml.replace("</infNFSe>", "<IBSCBS><totCIBS><vTotNF>nove reais</vTotNF></totCIBS></IBSCBS></infNFSe>");
  }
}

/** `ArquivoXml` for an entry, corrupted as asked. */
function arquivoXml(entry: FeedEntry, fault: ItemFault | undefined, bombBytes: number): string {
  switch (fault) {
    case "truncated-gzip": {
      const gz = Buffer.from(entry.arquivoXml, "base64");
      return gz.subarray(0, Math.floor(gz.length / 2)).toString("base64");
    }
    case "bad-base64":
      return `${entry.arquivoXml.slice(0, 40)}*%$#${entry.arquivoXml.slice(40)}`;
    case "malformed-xml":
      return gzipSync(Buffer.from(entry.xml.replace(/<\/infNFSe>|<\/infEvento>/, ""), "utf8")).toString("base64");
    case "dtd":
      return gzipSync(Buffer.from(`<!DOCTYPE NFSe [<!ENTITY x "y">]>${entry.xml.replace(/^<\?xml[^>]*\?>/, "")}`)).toString("base64");
    case "bomb":
      return bombPayload(bombBytes);
    case "poison-long-description":
    case "poison-huge-rate":
    case "poison-lowercase-cnpj":
    case "poison-long-name":
    case "poison-bad-ibscbs":
      return gzipSync(Buffer.from(poisoned(entry.xml, fault), "utf8")).toString("base64");
    default:
      return entry.arquivoXml;
  }
}

/** A `LoteDFe` item: `TipoEvento` only on events (absent, not null, on notes). */
export function loteItem(entry: FeedEntry, fault: ItemFault | undefined, bombBytes: number): object {
  const isEvent = entry.facts.kind === "EVENTO";
  return {
    ...(fault === "missing-nsu" ? { NSU: null } : { NSU: Number(entry.nsu) }),
    ChaveAcesso: entry.chave,
    TipoDocumento: isEvent ? "EVENTO" : "NFSE",
    ...(entry.facts.kind === "EVENTO" ? { TipoEvento: entry.facts.tipoEvento } : {}),
    ArquivoXml: arquivoXml(entry, fault, bombBytes),
    DataHoraGeracao: entry.dataHoraGeracao,
  };
}

export function sendJson(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendHtml(res: ServerResponse, status: number, title: string, text: string): void {
  const html = `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(html) });
  res.end(html);
}
