// pix-utils (cobranca.md §9) as an independent oracle: every payload we build must parse, CRC included.
import { hasError, parsePix } from "pix-utils";
import { describe, expect, it } from "vitest";
import { buildPixDinamico, buildPixEstatico } from "./pix.js";
import { prng } from "./testing/prng.js";

describe("pix-utils oracle", () => {
  it("parses our static and dynamic payloads with a valid CRC", () => {
    const r = prng(5);
    for (let i = 0; i < 200; i++) {
      const p = buildPixEstatico({
        chave: "12345678909",
        nome: `LOJA ${r.digits(4)}`,
        cidade: "SAO PAULO",
        valorCentavos: r.int(1, 9_999_999),
        txid: `T${r.digits(10)}`,
      });
      const x = parsePix(p);
      expect(hasError(x), p).toBe(false);
      expect((x as { pixKey?: string }).pixKey).toBe("12345678909");
    }
    const d = buildPixDinamico({ url: "pix.example.com/qr/v2/cobv/abc", nome: "EMPRESA", cidade: "CURITIBA" });
    const y = parsePix(d);
    expect(hasError(y)).toBe(false);
    expect((y as { type?: string }).type).toBe("DYNAMIC");
  });

  it("rejects a payload whose CRC we corrupt (the oracle can fail)", () => {
    const p = buildPixEstatico({ chave: "12345678909", nome: "LOJA", cidade: "SAO PAULO", valorCentavos: 100, txid: "T1" });
    const bad = p.slice(0, -4) + (p.slice(-4) === "0000" ? "0001" : "0000");
    expect(hasError(parsePix(bad))).toBe(true);
  });
});
