import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { FaultReason } from "../gen/malha/nfse/v1/distribution_pb.js";
import { decodeArquivoXml, decodeBase64Strict, sha256Hex } from "./payload.js";

const xml = Buffer.from('<?xml version="1.0"?>\r\n<NFSe versao="1.01">ação</NFSe>\n', "utf8");
const b64 = gzipSync(xml).toString("base64");

describe("ArquivoXml decoding", () => {
  it("returns the XML byte-exact (line ends and UTF-8 untouched)", () => {
    const res = decodeArquivoXml(b64, 1024);
    expect(res).toEqual({ ok: true, xml });
    expect(sha256Hex(xml)).toMatch(/^[0-9a-f]{64}$/);
    expect(decodeArquivoXml(b64.replace(/(.{20})/g, "$1\r\n"), 1024)).toEqual({ ok: true, xml });
  });

  it("refuses text Node's lenient decoder would accept", () => {
    for (const bad of [`${b64.slice(0, 10)}*${b64.slice(10)}`, `${b64}=`, "H4sI-_", "abcde"]) {
      expect(decodeBase64Strict(bad)).toBeUndefined();
      expect(decodeArquivoXml(bad, 1024)).toMatchObject({ ok: false, reason: FaultReason.BAD_BASE64 });
    }
  });

  it("reports truncated or non-gzip payloads as BAD_GZIP", () => {
    const gz = gzipSync(Buffer.alloc(4096, 65));
    expect(decodeArquivoXml(gz.subarray(0, gz.length - 12).toString("base64"), 1 << 20)).toMatchObject({
      ok: false,
      reason: FaultReason.BAD_GZIP,
    });
    expect(decodeArquivoXml(Buffer.from("<NFSe>plain xml, not gzip</NFSe>").toString("base64"), 1 << 20)).toMatchObject({
      ok: false,
      reason: FaultReason.BAD_GZIP,
    });
  });

  it("inflates whatever the gzip trailer's size says: several members, a document above one output chunk, a wrong size", () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, "<a>ação</a>");
    const inflated = decodeArquivoXml(gzipSync(big).toString("base64"), 8 * 1024 * 1024);
    expect(inflated.ok && inflated.xml.equals(big)).toBe(true);
    const twoMembers = Buffer.concat([gzipSync(xml), gzipSync(big.subarray(0, 100))]);
    expect(decodeArquivoXml(twoMembers.toString("base64"), 1024 * 1024)).toEqual({
      ok: true,
      xml: Buffer.concat([xml, big.subarray(0, 100)]),
    });
    const lying = Buffer.from(gzipSync(xml));
    lying.writeUInt32LE(1, lying.length - 4);
    expect(decodeArquivoXml(lying.toString("base64"), 1024)).toMatchObject({ ok: false, reason: FaultReason.BAD_GZIP });
  });

  it("stops inflating a decompression bomb at the cap", () => {
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = decodeArquivoXml(bomb.toString("base64"), 1024 * 1024);
    expect(res).toMatchObject({ ok: false, reason: FaultReason.TOO_LARGE });
    expect(decodeArquivoXml(gzipSync(Buffer.alloc(1024 * 1024)).toString("base64"), 1024 * 1024).ok).toBe(true);
  });

  it("accepts and decodes exactly what the strip-then-regex check it replaced did", () => {
    // The previous implementation, kept as the reference.
    const reference = (text: string) => {
      const compact = text.replace(/[\r\n\t ]/g, "");
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return undefined;
      if (compact.length !== compact.replace(/=+$/, "").length && compact.length % 4 !== 0) return undefined;
      return Buffer.from(compact, "base64");
    };
    const pieces = ["QUJD", "QQ", "Q", "=", "==", "\r\n", " ", "\t", "-", "*", "é", "+/", "A"];
    let seed = 3;
    const rnd = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 16) % n;
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const text = Array.from({ length: rnd(8) }, () => pieces[rnd(pieces.length)]).join("");
      const want = reference(text);
      expect(decodeBase64Strict(text), JSON.stringify(text)).toEqual(want);
      if (want) accepted++;
    }
    expect(accepted).toBeGreaterThan(200);
    expect(accepted).toBeLessThan(4800);
  });
});
