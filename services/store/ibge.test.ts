import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { municipalityTables, parseIbge, ufOf } from "./ibge.js";

describe("parseIbge", () => {
  it("accepts seven ASCII digits with a known UF prefix and names its tables from them", () => {
    const ibge = parseIbge("3550308");
    expect(ufOf(ibge)).toBe("SP");
    expect(municipalityTables(ibge)).toEqual({ documentos: "`nfse_documentos_3550308`", eventos: "`nfse_eventos_3550308`" });
    expect(ufOf(parseIbge("5300108"))).toBe("DF");
  });

  it.each([
    "",
    "355030",
    "35503080",
    "1050308",
    "2050308",
    "3450308",
    "5450308",
    "3550308\n",
    " 3550308",
    "35503o8",
    "٣٥٥٠٣٠٨",
    "3550308`; DROP TABLE x; --",
  ])("refuses %j with INVALID_ARGUMENT", (value) => {
    let err: unknown;
    try {
      parseIbge(value);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it("re-checks a value that was cast instead of parsed", () => {
    expect(() => municipalityTables("1; DROP" as never)).toThrow(ConnectError);
  });
});
