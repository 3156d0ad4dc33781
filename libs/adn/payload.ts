// `ArquivoXml` is the XML gzipped then Base64-encoded (adn.md §2.1). Decoding is strict (Node's Base64
// decoder silently skips garbage) and inflation is capped: a batch is attacker-reachable input.
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { FaultReason } from "../gen/malha/nfse/v1/distribution_pb.js";

export type DecodeResult = { ok: true; xml: Buffer } | { ok: false; reason: FaultReason; message: string };

// One pass over the text instead of strip-then-regex: the check was a visible share of decodeItem. Node's
// decoder skips the same whitespace itself, so the text is decoded as it is.
const ALPHABET = 1;
const PAD = 2;
const SPACE = 3;
const CLASS = new Uint8Array(128);
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") CLASS[ch.charCodeAt(0)] = ALPHABET;
CLASS[61] = PAD; // =
for (const ch of "\r\n\t ") CLASS[ch.charCodeAt(0)] = SPACE;

/** Strict standard Base64 (line breaks tolerated); undefined when the text is not Base64. */
export function decodeBase64Strict(text: string): Buffer | undefined {
  // Text that is the canonical Base64 of what it decodes to has only alphabet characters and its padding
  // in place: what the ADN sends. Decoding and encoding it back is native and cost less than the scan below,
  // which stays for the rest (line breaks, non-canonical padding bits, and text that is not Base64).
  const decoded = Buffer.from(text, "base64");
  if (decoded.toString("base64") === text) return decoded;
  let digits = 0;
  let pad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? CLASS[c] : 0;
    if (k === ALPHABET) {
      if (pad > 0) return undefined;
      digits++;
    } else if (k === PAD) {
      if (++pad > 2) return undefined;
    } else if (k !== SPACE) return undefined;
  }
  const length = digits + pad;
  if (length % 4 === 1 || (pad > 0 && length % 4 !== 0)) return undefined;
  return decoded;
}

/** zlib's smallest output chunk. */
const MIN_CHUNK_BYTES = 64;
/** Larger documents are inflated in chunks of this size and joined. */
const MAX_CHUNK_BYTES = 1024 * 1024;

/**
 * The output buffer for one inflation, sized by the gzip trailer's ISIZE (the uncompressed length mod 2^32)
 * plus the byte zlib needs to report the end without asking for another buffer. zlib's default 16 KiB
 * buffer per item was ~6× a typical XML and an allocation of its own; a wrong ISIZE (a corrupt stream, which
 * zlib refuses at the trailer, or several gzip members) only changes how many chunks are joined.
 */
function outputChunkBytes(gz: Buffer, maxBytes: number): number {
  const isize = gz.readUInt32LE(gz.length - 4);
  return Math.max(MIN_CHUNK_BYTES, Math.min(isize + 1, maxBytes + 1, MAX_CHUNK_BYTES));
}

/** Base64 → gunzip with at most `maxBytes` inflated. */
export function decodeArquivoXml(text: string, maxBytes: number): DecodeResult {
  const gz = decodeBase64Strict(text);
  if (gz === undefined) return { ok: false, reason: FaultReason.BAD_BASE64, message: "ArquivoXml is not valid Base64" };
  if (gz.length < 18 || gz[0] !== 0x1f || gz[1] !== 0x8b) {
    return { ok: false, reason: FaultReason.BAD_GZIP, message: "ArquivoXml does not decode to a gzip stream" };
  }
  try {
    return { ok: true, xml: gunzipSync(gz, { maxOutputLength: maxBytes, chunkSize: outputChunkBytes(gz, maxBytes) }) };
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
