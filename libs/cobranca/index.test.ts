import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as api from "./index.js";

const here = fileURLToPath(new URL(".", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === "testing" ? [] : sources(p);
    return p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
  });
}

describe("public API and purity", () => {
  it("exports the typed functions", () => {
    for (const f of [
      "gerarBoleto",
      "lerBoleto",
      "fatorVencimento",
      "decodeFator",
      "buildPixEstatico",
      "parsePix",
      "gerarRemessa",
      "lerRemessa",
      "lerRetorno",
      "checkCnab",
      "agruparSubLotes",
      "renderizarBoletoPdf",
      "renderizarLotePdf",
    ])
      expect(typeof (api as Record<string, unknown>)[f], f).toBe("function");
  });

  it("the library does no I/O, reads no clock, draws no randomness and does not depend on transport types", () => {
    for (const file of sources(here)) {
      const src = readFileSync(file, "utf8");
      const rel = file.slice(here.length);
      expect(src, rel).not.toMatch(/from "node:(fs|net|http|https|child_process|os|path)"|from "(fs|net|http|https)"|require\(/);
      expect(src, rel).not.toMatch(/Date\.now\(|new Date\(\)|Math\.random|performance\.now|process\.env/);
      expect(src, rel).not.toMatch(/libs\/gen|\.\.\/gen\//);
    }
  });

  it("every error code is documented in the README", () => {
    const readme = readFileSync(join(here, "README.md"), "utf8");
    for (const c of api.ERROR_CODES) expect(readme, c).toContain(`\`${c}\``);
  });
});
