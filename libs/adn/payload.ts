// `ArquivoXml` is the XML gzipped then Base64-encoded (adn.md §2.1). Decoding is strict (Node's Base64
// decoder silently skips garbage) and inflation is capped: a batch is attacker-reachable input.
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { FaultReason } from "../gen/malha/nfse/v1/distribution_pb.js";

export type DecodeResult =
  | { ok: true; xml: Buffer }
  | { ok: false; reason: FaultReason; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard Base64 (line breaks tolerated); undefined when the text is not Base64. */
export function decodeBase64Strict(text: string): Buffer | undefined {
  const compact = text.replace(/[\r\n\t ]/g, "");
  if (!BASE64.test(compact) || compact.length % 4 === 1) return undefined;
  const unpadded = compact.replace(/=+$/, "");
  if (compact.length !== unpadded.length && compact.length % 4 !== 0) return undefined;
  return Buffer.from(compact, "base64");
}

/** Base64 → gunzip with at most `maxBytes` inflated. */
export function decodeArquivoXml(text: string, maxBytes: number): DecodeResult {
  const gz = decodeBase64Strict(text);
  if (gz === undefined) return { ok: false, reason: FaultReason.BAD_BASE64, message: "ArquivoXml is not valid Base64" };
  if (gz.length < 18 || gz[0] !== 0x1f || gz[1] !== 0x8b) {
    return { ok: false, reason: FaultReason.BAD_GZIP, message: "ArquivoXml does not decode to a gzip stream" };
  }
  try {
    return { ok: true, xml: gunzipSync(gz, { maxOutputLength: maxBytes }) };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) {
      return { ok: false, reason: FaultReason.TOO_LARGE, message: `decompressed size exceeds the cap of ${maxBytes} bytes` };
    }
    return { ok: false, reason: FaultReason.BAD_GZIP, message: `gzip stream is corrupt or truncated (${e.code ?? e.message})` };
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
