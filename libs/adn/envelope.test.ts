import { describe, expect, it } from "vitest";
import { EnvelopeError, parseEnvelope } from "./envelope.js";

describe("the ADN JSON envelope", () => {
  it("reads the PascalCase envelope of adn.md §7.1", () => {
    const env = parseEnvelope(
      JSON.stringify({
        StatusProcessamento: "DOCUMENTOS_LOCALIZADOS",
        LoteDFe: [
          { NSU: 1201, ChaveAcesso: "3550", TipoDocumento: "NFSE", ArquivoXml: "H4sI", DataHoraGeracao: "2026-03-10T14:02:11.41" },
          {
            NSU: 1202,
            ChaveAcesso: "3550",
            TipoDocumento: "EVENTO",
            TipoEvento: "CANCELAMENTO",
            ArquivoXml: "H4sI",
            DataHoraGeracao: "2026-03-11T09:30:02.7",
          },
        ],
        Alertas: [{ Mensagem: {}, Codigo: "A1", Descricao: "aviso", Complemento: null, Parametros: ["x"] }],
        Erros: [],
        TipoAmbiente: "HOMOLOGACAO",
        VersaoAplicativo: "1.0.0.0",
        DataHoraProcessamento: "2026-03-12T08:00:00.1234567-03:00",
      }),
    );
    expect(env).toMatchObject({ statusProcessamento: "DOCUMENTOS_LOCALIZADOS", tipoAmbiente: "HOMOLOGACAO", versaoAplicativo: "1.0.0.0" });
    expect(env.lote.map((i) => [i.nsu, i.tipoDocumento, i.tipoEvento])).toEqual([
      ["1201", "NFSE", ""],
      ["1202", "EVENTO", "CANCELAMENTO"],
    ]);
    expect(env.alertas).toEqual([{ codigo: "A1", descricao: "aviso", complemento: "", parametros: ["x"] }]);
  });

  it("tolerates camelCase, lower case, a single `erro` object, null lists and a BOM", () => {
    const env = parseEnvelope(
      "\uFEFF" +
        JSON.stringify({
          statusProcessamento: "rejeicao",
          lotedfe: null,
          erro: { codigo: "E2001", descricao: "CNPJ" },
          tipoambiente: "producao",
        }),
    );
    expect(env).toMatchObject({
      statusProcessamento: "REJEICAO",
      lote: [],
      tipoAmbiente: "PRODUCAO",
      erros: [{ codigo: "E2001", descricao: "CNPJ" }],
    });
  });

  it("takes the first of keys that differ only in case, and the plural list before the singular", () => {
    const env = parseEnvelope(
      '{"statusprocessamento":"first","StatusProcessamento":"second","Erro":{"Codigo":"E1"},"erros":[{"codigo":"E2","CODIGO":"E3"}],' +
        '"LoteDFe":[{"nsu":7,"NSU":8,"ChaveAcesso":"a","chaveacesso":"b"}]}',
    );
    expect(env.statusProcessamento).toBe("FIRST");
    expect(env.erros.map((e) => e.codigo)).toEqual(["E2"]);
    expect(env.lote).toMatchObject([{ nsu: "7", chaveAcesso: "a" }]);
  });

  it("keeps NSU as a decimal string, also beyond 2^53 when sent as a string, and drops nonsense", () => {
    const env = parseEnvelope(
      JSON.stringify({ StatusProcessamento: "X", LoteDFe: [{ NSU: "9007199254740993" }, { NSU: -1 }, { NSU: null }, { NSU: 1.5 }] }),
    );
    expect(env.lote.map((i) => i.nsu)).toEqual(["9007199254740993", undefined, undefined, undefined]);
    const big = parseEnvelope('{"StatusProcessamento":"X","LoteDFe":[{"NSU": 9007199254740993},{"nsu":12}]}');
    expect(big.lote.map((i) => i.nsu)).toEqual(["9007199254740993", "12"]);
  });

  it("refuses HTML, non-objects and envelopes without a status", () => {
    for (const body of ["<html>429</html>", "[]", '{"LoteDFe":[]}']) expect(() => parseEnvelope(body)).toThrow(EnvelopeError);
  });
});
