// protobuf-es turns every string field into UTF-8 with TextEncoder.encode, which allocates a fresh
// ArrayBuffer per call; Node's Buffer.from(text, "utf8") writes short strings into a shared pool and is
// measured ≈ 25 % faster on serializing a DistributionItem (≈ 40 string fields;
// docs/decisions/0007-buffer-text-encoding.md). Same bytes: both replace
// lone surrogates with U+FFFD. Decoding keeps protobuf-es's own (TextDecoder was as fast).
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";

type TextEncoding = ReturnType<typeof getTextEncoding>;
let nodeEncoding: TextEncoding | undefined;

/** Makes protobuf-es encode strings with Buffer.from; process-wide. */
export function useNodeTextEncoding(): void {
  const current = getTextEncoding();
  nodeEncoding ??= {
    encodeUtf8: (text: string) => Buffer.from(text, "utf8"),
    decodeUtf8: current.decodeUtf8,
    checkUtf8: current.checkUtf8,
  };
  configureTextEncoding(nodeEncoding);
}
