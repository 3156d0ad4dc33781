/**
 * PIX BR Code (EMV MPM) for the QR on a boleto: build and parse, static key or dynamic location
 * (cobranca.md §6). The dynamic payload of a Bolepix comes from the bank; we validate and render it.
 */
import { fail } from "./errors.js";
import { foldAscii } from "./text.js";

export const PIX_GUI = "br.gov.bcb.pix";
export const PIX_LIMITS = { chave: 77, url: 77, nome: 25, cidade: 15, txidStatic: 25, infoAdicional: 72, payload: 512 } as const;

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over the UTF-8 bytes; 4 upper-case hex digits, zero-padded. */
export function crc16ccitt(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, "0");
}

function tlv(id: string, value: string, field: string): string {
  if (value.length > 99) fail("PIX_INVALIDO", `EMV object ${id} is ${value.length} chars (max 99)`, field);
  return id + String(value.length).padStart(2, "0") + value;
}

export interface PixEstatico {
  /** DICT key: CPF, CNPJ, +55 phone, e-mail or random key (EVP). */
  readonly chave: string;
  readonly nome: string;
  readonly cidade: string;
  readonly valorCentavos?: number;
  /** 1–25 [A-Za-z0-9]; omitted → "***". */
  readonly txid?: string;
  readonly infoAdicional?: string;
  /** true → point of initiation 12 (single use). */
  readonly usoUnico?: boolean;
}

export interface PixDinamico {
  /** PSP location (cobv), without "https://". */
  readonly url: string;
  readonly nome: string;
  readonly cidade: string;
  /** Bolepix/cobv payloads are single use (12) by default. */
  readonly usoUnico?: boolean;
}

const KEY_SHAPES: ReadonlyArray<[string, RegExp]> = [
  ["CPF", /^\d{11}$/],
  ["CNPJ", /^\d{14}$/],
  ["TELEFONE", /^\+[1-9]\d{10,13}$/],
  ["EMAIL", /^[^\s@]+@[^\s@]+\.[^\s@]+$/],
  ["EVP", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i],
];

export function tipoChavePix(chave: string): string | undefined {
  return KEY_SHAPES.find(([, re]) => re.test(chave))?.[0];
}

function textField(v: string | undefined, max: number, field: string): string {
  if (v === undefined || v === null || String(v).trim() === "") fail("CAMPO_OBRIGATORIO", `${field} is required`, field);
  const t = foldAscii(String(v), field).trim();
  if (t.length > max) fail("CAMPO_EXCEDE_TAMANHO", `${field} has ${t.length} chars (max ${max})`, field, { max });
  return t;
}

function amount(c: number, field: string): string {
  if (!Number.isSafeInteger(c) || c <= 0) fail("VALOR_INVALIDO", "PIX amount must be a positive integer number of cents", field);
  const s = `${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")}`;
  if (s.length > 13) fail("VALOR_ACIMA_DO_LIMITE", "PIX amount exceeds 13 characters", field);
  return s;
}

function finish(body: string): string {
  const withCrcId = body + "6304";
  const payload = withCrcId + crc16ccitt(withCrcId);
  if (payload.length > PIX_LIMITS.payload)
    fail("PIX_INVALIDO", `payload of ${payload.length} chars exceeds ${PIX_LIMITS.payload}`, "payload");
  return payload;
}

export function buildPixEstatico(p: PixEstatico): string {
  if (!p.chave) fail("CAMPO_OBRIGATORIO", "PIX key is required", "chave");
  if (p.chave.length > PIX_LIMITS.chave) fail("CAMPO_EXCEDE_TAMANHO", `key longer than ${PIX_LIMITS.chave}`, "chave");
  if (!tipoChavePix(p.chave)) fail("PIX_INVALIDO", `not a DICT key: ${JSON.stringify(p.chave)}`, "chave");
  const txid = p.txid ?? "***";
  if (txid !== "***" && !/^[A-Za-z0-9]{1,25}$/.test(txid)) fail("PIX_INVALIDO", "static txid must be 1–25 letters or digits", "txid");
  let mai = tlv("00", PIX_GUI, "chave") + tlv("01", p.chave, "chave");
  if (p.infoAdicional) mai += tlv("02", textField(p.infoAdicional, PIX_LIMITS.infoAdicional, "infoAdicional"), "infoAdicional");
  let body = tlv("00", "01", "payload");
  if (p.usoUnico) body += tlv("01", "12", "usoUnico");
  body += tlv("26", mai, "infoAdicional") + tlv("52", "0000", "") + tlv("53", "986", "");
  if (p.valorCentavos !== undefined) body += tlv("54", amount(p.valorCentavos, "valorCentavos"), "valorCentavos");
  body +=
    tlv("58", "BR", "") +
    tlv("59", textField(p.nome, PIX_LIMITS.nome, "nome"), "nome") +
    tlv("60", textField(p.cidade, PIX_LIMITS.cidade, "cidade"), "cidade");
  body += tlv("62", tlv("05", txid, "txid"), "txid");
  return finish(body);
}

export function buildPixDinamico(p: PixDinamico): string {
  if (!p.url) fail("CAMPO_OBRIGATORIO", "PIX location is required", "url");
  const url = p.url.replace(/^https:\/\//i, "");
  if (/^[a-z]+:\/\//i.test(url) || /\s/.test(url)) fail("PIX_INVALIDO", "location must be a host/path without scheme", "url");
  if (url.length > PIX_LIMITS.url) fail("CAMPO_EXCEDE_TAMANHO", `location longer than ${PIX_LIMITS.url}`, "url");
  const mai = tlv("00", PIX_GUI, "url") + tlv("25", url, "url");
  let body = tlv("00", "01", "payload");
  if (p.usoUnico !== false) body += tlv("01", "12", "usoUnico");
  body += tlv("26", mai, "url") + tlv("52", "0000", "") + tlv("53", "986", "") + tlv("58", "BR", "");
  body +=
    tlv("59", textField(p.nome, PIX_LIMITS.nome, "nome"), "nome") + tlv("60", textField(p.cidade, PIX_LIMITS.cidade, "cidade"), "cidade");
  body += tlv("62", tlv("05", "***", "txid"), "txid");
  return finish(body);
}

export interface TlvObject {
  readonly id: string;
  readonly value: string;
}

export function parseTlv(s: string, field = "payload"): TlvObject[] {
  const out: TlvObject[] = [];
  let i = 0;
  while (i < s.length) {
    const id = s.slice(i, i + 2);
    const lenS = s.slice(i + 2, i + 4);
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(lenS)) fail("PIX_INVALIDO", `bad TLV header at ${i}`, field, { offset: i });
    const len = Number(lenS);
    const value = s.slice(i + 4, i + 4 + len);
    if (value.length !== len) fail("PIX_INVALIDO", `TLV ${id} at ${i} runs past the end`, field, { offset: i });
    out.push({ id, value });
    i += 4 + len;
  }
  return out;
}

export interface PixParsed {
  readonly tipo: "ESTATICO" | "DINAMICO";
  readonly chave?: string;
  readonly url?: string;
  readonly infoAdicional?: string;
  readonly valorCentavos?: number;
  readonly nome: string;
  readonly cidade: string;
  readonly txid: string;
  readonly usoUnico: boolean;
  readonly crc: string;
}

/** Parse and validate a BR Code: TLV shape, mandatory objects, limits, CRC (upper- or lower-case hex). */
export function parsePix(payload: string): PixParsed {
  if (typeof payload !== "string" || payload.length < 20) fail("PIX_INVALIDO", "payload too short", "payload");
  if (payload.length > PIX_LIMITS.payload) fail("PIX_INVALIDO", "payload too long", "payload");
  const objs = parseTlv(payload);
  const last = objs[objs.length - 1];
  if (last?.id !== "63" || last.value.length !== 4) fail("PIX_INVALIDO", "CRC (63, length 04) must be the last object", "payload");
  const expected = crc16ccitt(payload.slice(0, -4));
  if (last.value.toUpperCase() !== expected)
    fail("PIX_CRC_INVALIDO", `CRC is ${last.value}, expected ${expected}`, "payload", { expected });
  if (objs[0]?.id !== "00" || objs[0].value !== "01") fail("PIX_INVALIDO", "payload format indicator 00=01 must come first", "payload");
  const get = (id: string) => objs.find((o) => o.id === id)?.value;
  const mai = get("26");
  if (!mai) fail("PIX_INVALIDO", "merchant account information (26) missing", "payload");
  const sub = parseTlv(mai, "payload.26");
  const gui = sub.find((o) => o.id === "00")?.value;
  if (!gui || gui.toLowerCase() !== PIX_GUI) fail("PIX_INVALIDO", `GUI must be ${PIX_GUI}`, "payload.26.00");
  const chave = sub.find((o) => o.id === "01")?.value;
  const url = sub.find((o) => o.id === "25")?.value;
  if (!chave && !url) fail("PIX_INVALIDO", "neither key (26-01) nor location (26-25)", "payload.26");
  if (get("52") === undefined || get("53") !== "986" || get("58") !== "BR") fail("PIX_INVALIDO", "52/53=986/58=BR required", "payload");
  const nome = get("59");
  const cidade = get("60");
  if (!nome || nome.length > PIX_LIMITS.nome) fail("PIX_INVALIDO", "merchant name (59) missing or longer than 25", "payload.59");
  if (!cidade || cidade.length > PIX_LIMITS.cidade) fail("PIX_INVALIDO", "merchant city (60) missing or longer than 15", "payload.60");
  const add = get("62");
  const txid = add ? parseTlv(add, "payload.62").find((o) => o.id === "05")?.value : undefined;
  if (!txid) fail("PIX_INVALIDO", "txid (62-05) missing", "payload.62");
  const amt = get("54");
  let valorCentavos: number | undefined;
  if (amt !== undefined) {
    if (!/^\d{1,10}(\.\d{1,2})?$/.test(amt)) fail("PIX_INVALIDO", `bad amount ${amt}`, "payload.54");
    const [i, f = ""] = amt.split(".");
    valorCentavos = Number(i) * 100 + Number(f.padEnd(2, "0"));
  }
  const info = sub.find((o) => o.id === "02")?.value;
  return {
    tipo: url ? "DINAMICO" : "ESTATICO",
    ...(chave ? { chave } : {}),
    ...(url ? { url } : {}),
    ...(info ? { infoAdicional: info } : {}),
    ...(valorCentavos !== undefined ? { valorCentavos } : {}),
    nome,
    cidade,
    txid,
    usoUnico: get("01") === "12",
    crc: last.value,
  };
}
