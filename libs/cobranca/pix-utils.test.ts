/**
 * Issue #7 asks every PIX payload to parse with `pix-utils` (cobranca.md §9). It is not among the
 * dev dependencies yet (libs/cobranca cannot change package.json): this test runs as soon as it is
 * installed (`npm i -D pix-utils@2.8.2`) and is skipped until then.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { buildPixDinamico, buildPixEstatico } from "./pix.js";
import { prng } from "./test/prng.js";

const require = createRequire(import.meta.url);
const NAME = "pix-utils";
let available = false;
try {
  require.resolve(NAME);
  available = true;
} catch {
  available = false;
}

describe("pix-utils oracle", () => {
  it.skipIf(!available)("parses our static and dynamic payloads with a valid CRC", async () => {
    const m = (await import(/* @vite-ignore */ NAME)) as { parsePix: (s: string) => unknown; hasError: (x: unknown) => boolean };
    const r = prng(5);
    for (let i = 0; i < 200; i++) {
      const p = buildPixEstatico({ chave: "12345678909", nome: `LOJA ${r.digits(4)}`, cidade: "SAO PAULO", valorCentavos: r.int(1, 9_999_999), txid: `T${r.digits(10)}` });
      const x = m.parsePix(p) as Record<string, unknown>;
      expect(m.hasError(x), p).toBe(false);
      expect(x.pixKey).toBe("12345678909");
    }
    const d = buildPixDinamico({ url: "pix.example.com/qr/v2/cobv/abc", nome: "EMPRESA", cidade: "CURITIBA" });
    const y = m.parsePix(d) as Record<string, unknown>;
    expect(m.hasError(y)).toBe(false);
    expect(y.type).toBe("DYNAMIC");
  });
});
