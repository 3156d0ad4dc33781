import { describe, expect, it } from "vitest";
import { date } from "../date.js";
import { fixtureText } from "../testing/fixtures.js";
import { prng } from "../testing/prng.js";
import { checkCnab } from "./checker.js";
import { type Pessoa, type RemessaInput, type Titulo, gerarRemessa, lerRemessa, reescreverRemessa } from "./remessa.js";
import { refusalOf } from "../testing/refusal.js";

/** The brcobranca golden inputs (fixtures README, "Remessa (golden files)"). */
const PAGADOR = (uf: string, documento = "12345678901"): Pessoa => ({
  nome: "PABLO DIEGO JOSÉ FRANCISCO,!^.?\\/@  DE PAULA JUAN NEPOMUCENO MARÍA DE LOS REMEDIOS CIPRIANO DE LA SANTÍSSIMA TRINIDAD RUIZ Y PICASSO",
  documento,
  endereco: "RUA RIO GRANDE DO SUL,!^.?\\/@ São paulo Minas caçapa da silva junior",
  bairro: "São josé dos quatro apostolos magros",
  cep: "12345678",
  cidade: "Santa rita de cássia maria da silva",
  uf,
});
const HOJE = date(2015, 7, 14);
const GERADO = { ...HOJE, hour: 16, minute: 15, second: 15 };
const NOME = "SOCIEDADE BRASILEIRA DE ZOOLOGIA LTDA";

const titulo = (over: Partial<Titulo>): Titulo => ({
  id: "6969",
  nossoNumero: "123",
  vencimento: HOJE,
  emissao: HOJE,
  valorCentavos: 19990,
  pagador: PAGADOR("SP"),
  ...over,
});

const GOLDEN: Array<[string, RemessaInput]> = [
  [
    "remessa/400/brcobranca-237-remessa-bradesco-cnab400.rem",
    {
      banco: "237",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678910",
        carteira: "01",
        agencia: "12345",
        conta: "1234567",
        contaDv: "1",
        convenio: "123",
      },
      titulos: [titulo({ numeroDocumento: "1", especie: "01", multa: { codigo: "2", valor: 200 } })],
    },
  ],
  [
    "remessa/400/brcobranca-341-remessa-itau-cnab400.rem",
    {
      banco: "341",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: { nome: NOME, documento: "12345678910", carteira: "123", agencia: "1234", conta: "12345", contaDv: "1" },
      titulos: [titulo({ especie: "01", multa: { codigo: "1", data: HOJE, valor: 200 }, protesto: { codigo: "1", dias: 3 } })],
    },
  ],
  [
    "remessa/240/brcobranca-001-remessa-banco_brasil-cnab240.rem",
    {
      banco: "001",
      layout: 240,
      nsa: 0,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678901",
        convenio: "1234567",
        carteira: "12",
        variacao: "123",
        agencia: "1234",
        agenciaDv: "3",
        conta: "12345",
        contaDv: "5",
      },
      titulos: [titulo({ numeroDocumento: "6969", especie: "02" })],
    },
  ],
  [
    "remessa/240/brcobranca-756-remessa-bancoob-cnab240.rem",
    {
      banco: "756",
      layout: 240,
      nsa: 0,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "74576177000177",
        convenio: "512231",
        modalidade: "01",
        agencia: "4327",
        agenciaDv: "3",
        conta: "03666",
        contaDv: "8",
      },
      titulos: [
        titulo({
          nossoNumero: "429715",
          numeroDocumento: "6969",
          valorCentavos: 5000,
          especie: "02",
          juros: { codigo: "0" },
          protesto: { codigo: "1", dias: 0 },
          pagador: PAGADOR("RJ", "82136760505"),
        }),
      ],
    },
  ],
  [
    "remessa/240/brcobranca-748-remessa-sicredi-cnab240.rem",
    {
      banco: "748",
      layout: 240,
      nsa: 0,
      geradoEm: { year: 2007, month: 7, day: 14, hour: 16, minute: 15, second: 15 },
      validarDocumentos: false,
      beneficiario: { nome: NOME, documento: "74576177000177", agencia: "0165", conta: "00623", contaDv: "8" },
      titulos: [
        {
          id: "6969",
          nossoNumero: "072000031",
          numeroDocumento: "6969",
          vencimento: date(2007, 7, 14),
          emissao: date(2007, 7, 14),
          valorCentavos: 5000,
          especie: "03",
          juros: { codigo: "1" },
          desconto: { codigo: "1" },
          baixa: { codigo: "1", dias: 60 },
          pagador: PAGADOR("RJ", "82136760505"),
        },
      ],
    },
  ],
  [
    "remessa/240/brcobranca-104-remessa-caixa-cnab240.rem",
    {
      banco: "104",
      layout: 240,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678901",
        convenio: "123456",
        versaoAplicativo: "1234",
        agencia: "12345",
        agenciaDv: "1",
        conta: "1234",
        contaDv: "0",
        agenciaContaDv: "0",
      },
      titulos: [
        titulo({
          id: "00000006969",
          numeroDocumento: "6969",
          especie: "99",
          juros: { codigo: "1" },
          multa: { codigo: "2" },
          baixa: { codigo: "1", dias: 120 },
        }),
      ],
    },
  ],
  [
    "remessa/240/brcobranca-033-remessa-santander-cnab240.rem",
    {
      banco: "033",
      layout: 240,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "28254225000193",
        codigoTransmissao: "000100001234567",
        agencia: "0001",
        agenciaDv: "9",
        conta: "013001234",
        contaDv: "3",
      },
      titulos: [titulo({ id: "9999", nossoNumero: "1234567", numeroDocumento: "9999", especie: "02", baixa: { codigo: "3", dias: 0 } })],
    },
  ],
];

describe("remessa writers reproduce the golden files byte for byte", () => {
  it.each(GOLDEN)("%s", (file, input) => {
    const out = gerarRemessa(input);
    expect(out.text).toBe(fixtureText(file));
    expect(out.check.ok).toBe(true);
    // truncations are declared and reported, never silent
    expect(out.warnings.some((w) => w.code === "TEXTO_TRUNCADO" && w.field.includes("nome"))).toBe(true);
  });

  it.each(GOLDEN)("%s: read back and re-encoded gives the same bytes; the título comes back", (file, input) => {
    const text = fixtureText(file);
    const lida = lerRemessa(text);
    expect(reescreverRemessa(lida)).toBe(text);
    expect(lida.banco).toBe(input.banco);
    expect(lida.titulos).toHaveLength(1);
    const t = lida.titulos[0]!;
    expect(t.id).toBe(input.titulos[0]!.id);
    expect(t.valorCentavos).toBe(input.titulos[0]!.valorCentavos);
    expect(t.vencimento).toEqual(input.titulos[0]!.vencimento);
  });
});

/**
 * Golden files our writer matches except in named columns, each a deliberate difference from the
 * generator that made the file (brcobranca): those columns are asserted here on their own.
 */
const GOLDEN_WITH_DIFFERENCES: Array<[string, RemessaInput, Array<[number, number, string, string]>]> = [
  [
    "remessa/400/brcobranca-001-remessa-banco-brasil-cnab400.rem",
    {
      banco: "001",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678910",
        carteira: "12",
        variacao: "123",
        convenio: "1234567",
        convenioLider: "7654321",
        agencia: "1234",
        conta: "1234",
        tipoCobranca: "04DSC",
      },
      titulos: [titulo({})],
    },
    // brcobranca leaves the controle do participante blank; we write the título id, which the CBR643
    // retorno echoes back in the same columns and our reader matches on.
    [[39, 63, "6969                     ", "controle do participante = título id"]],
  ],
  [
    "remessa/400/brcobranca-033-remessa-santander-cnab400.rem",
    {
      banco: "033",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678910",
        codigoTransmissao: "17777751042700080112",
        agencia: "8888",
        conta: "000002997",
        contaDv: "8",
      },
      titulos: [
        titulo({
          multa: { codigo: "4", valor: 200 },
          juros: { codigo: "1", valor: 800 },
          instrucao1: "06",
          protesto: { codigo: "1", dias: 6 },
        }),
      ],
    },
    // brcobranca writes the caller's number as given; the field is 7 digits + the modulo 11 DV (as our
    // CNAB 240 writer and the boleto compute it): 0000123 + 6.
    [[63, 70, "00001236", "nosso número with its DV"]],
  ],
  [
    // The same título with PIX: brcobranca's santander_pix spec (CPF key 12345678910, no txid, one
    // payment of the título's value), its type-8 record after the detail.
    "remessa/400/brcobranca-033-remessa-santander-cnab400-pix.rem",
    {
      banco: "033",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678910",
        codigoTransmissao: "17777751042700080112",
        agencia: "8888",
        conta: "000002997",
        contaDv: "8",
      },
      titulos: [
        titulo({
          multa: { codigo: "4", valor: 200 },
          juros: { codigo: "1", valor: 800 },
          instrucao1: "06",
          protesto: { codigo: "1", dias: 6 },
          pix: { chave: "12345678910" },
        }),
      ],
    },
    [[63, 70, "00001236", "nosso número with its DV"]],
  ],
];

describe("BB (CBR641) and Santander CNAB 400 (with and without PIX) remessa match their golden files outside the columns we write differently", () => {
  it.each(GOLDEN_WITH_DIFFERENCES)("%s", (file, input, differences) => {
    const out = gerarRemessa(input);
    expect(out.check.ok).toBe(true);
    const golden = fixtureText(file).split("\r\n");
    const ours = out.text.split("\r\n");
    expect(ours.map((l) => l.length)).toEqual(golden.map((l) => l.length));
    const detail = 1;
    for (const [from, to, value, what] of differences) expect(ours[detail]!.slice(from - 1, to), what).toBe(value);
    const blank = (line: string, i: number) =>
      i === detail ? differences.reduce((l, [from, to]) => l.slice(0, from - 1) + "#".repeat(to - from + 1) + l.slice(to), line) : line;
    expect(ours.map(blank)).toEqual(golden.map(blank));
  });

  it.each(GOLDEN_WITH_DIFFERENCES)("%s: ours reads back to the same título and re-encodes to the same bytes", (_file, input) => {
    const out = gerarRemessa(input);
    const lida = lerRemessa(out.text);
    expect(reescreverRemessa(lida)).toBe(out.text);
    expect(lida.titulos.map((t) => [t.id, t.nossoNumero?.replace(/^0+/, ""), t.valorCentavos, t.vencimento])).toEqual([
      ["6969", "123", 19990, HOJE],
    ]);
  });

  it("Santander's trailer counts every record and totals the títulos; BB's is blank", () => {
    const [, santander] = GOLDEN_WITH_DIFFERENCES[1]!;
    const three = gerarRemessa({
      ...santander,
      titulos: [0, 1, 2].map((i) => titulo({ id: `T${i}`, nossoNumero: String(100 + i), valorCentavos: 1000 * (i + 1) })),
    });
    const trailer = three.text.split("\r\n")[4]!;
    expect([trailer.slice(0, 1), trailer.slice(1, 7), trailer.slice(7, 20), trailer.slice(394)]).toEqual([
      "9",
      "000005",
      "0000000006000",
      "000005",
    ]);
    // The checker holds the writer to it.
    const forged = three.text.replace(trailer, trailer.slice(0, 7) + "0000000006001" + trailer.slice(20));
    expect(checkCnab(forged).errors.map((e) => e.rule)).toContain("TRAILER_VALOR");
  });

  it("BB computes agência and conta DVs (modulo 11, 10 → X) unless given, and refuses what CBR641 cannot carry", () => {
    const [, bb] = GOLDEN_WITH_DIFFERENCES[0]!;
    const header = (b: Partial<RemessaInput["beneficiario"]>) =>
      gerarRemessa({ ...bb, beneficiario: { ...bb.beneficiario, ...b } }).text.slice(26, 40);
    expect(header({})).toBe("12343000012343");
    expect(header({ agenciaDv: "7", contaDv: "X" })).toBe("1234700001234X");
    // BB's own example agência 0001-9; conta 23 has remainder 10, written X.
    expect(header({ agencia: "0001", conta: "23" })).toBe("0001900000023X");
    const refused = (b: Partial<RemessaInput["beneficiario"]>) =>
      code(() => gerarRemessa({ ...bb, beneficiario: { ...bb.beneficiario, ...b } }));
    expect(refused({ convenio: "123456" })).toEqual(["CONVENIO_INVALIDO", "beneficiario.convenio"]);
    expect(refused({ variacao: undefined })).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.variacao"]);
    expect(refused({ tipoCobranca: "05XYZ" })).toEqual(["CAMPO_INVALIDO", "beneficiario.tipoCobranca"]);
    expect(code(() => gerarRemessa({ ...bb, titulos: [titulo({ nossoNumero: "12345678901" })] }))).toEqual([
      "CAMPO_EXCEDE_TAMANHO",
      "titulos[0].nossoNumero",
    ]);
    // No place for them in the type-7 detail: refused, never dropped.
    expect(code(() => gerarRemessa({ ...bb, titulos: [titulo({ multa: { codigo: "2", valor: 200 } })] }))).toEqual([
      "CAMPO_INVALIDO",
      "titulos[0].multa",
    ]);
    expect(code(() => gerarRemessa({ ...bb, titulos: [titulo({ avalista: PAGADOR("SP") })] }))).toEqual([
      "CAMPO_INVALIDO",
      "titulos[0].avalista",
    ]);
  });

  it("Santander CNAB 240 refuses to write a blank código de transmissão", () => {
    const [, san240] = GOLDEN.find(([f]) => f.includes("033-remessa-santander-cnab240"))!;
    for (const codigoTransmissao of [undefined, "12345"]) {
      expect(code(() => gerarRemessa({ ...san240, beneficiario: { ...san240.beneficiario, codigoTransmissao } }))).toEqual([
        "CAMPO_OBRIGATORIO",
        "beneficiario.codigoTransmissao",
      ]);
    }
  });

  it("Santander needs its código de transmissão and the conta DV; the multa date is written only when given", () => {
    const [, san] = GOLDEN_WITH_DIFFERENCES[1]!;
    const refused = (b: Partial<RemessaInput["beneficiario"]>) =>
      code(() => gerarRemessa({ ...san, beneficiario: { ...san.beneficiario, ...b } }));
    expect(refused({ codigoTransmissao: undefined })).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.codigoTransmissao"]);
    expect(refused({ contaDv: undefined })).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.contaDv"]);
    expect(code(() => gerarRemessa({ ...san, titulos: [titulo({ nossoNumero: "12345678" })] }))).toEqual([
      "CAMPO_EXCEDE_TAMANHO",
      "titulos[0].nossoNumero",
    ]);
    const dated = gerarRemessa({ ...san, titulos: [titulo({ multa: { codigo: "4", valor: 200, data: date(2015, 7, 20) } })] });
    expect(dated.text.split("\r\n")[1]!.slice(101, 107)).toBe("200715");
  });
});

const code = (fn: () => unknown) => {
  const e = refusalOf(fn);
  return [e.code, e.field];
};

describe("determinism and errors", () => {
  it("same input → identical bytes", () => {
    const [, input] = GOLDEN[2]!;
    expect(Buffer.from(gerarRemessa(input).bytes).equals(Buffer.from(gerarRemessa(input).bytes))).toBe(true);
  });

  const [, bra] = GOLDEN[0]!;
  const t0 = bra.titulos[0]!;
  it.each<[string, RemessaInput, string, string]>([
    ["NN too long", { ...bra, titulos: [{ ...t0, nossoNumero: "123456789012" }] }, "CAMPO_EXCEDE_TAMANHO", "titulos[0].nossoNumero"],
    ["id too long", { ...bra, titulos: [{ ...t0, id: "x".repeat(26) }] }, "CAMPO_EXCEDE_TAMANHO", "titulos[0].id"],
    [
      "value too large",
      { ...bra, titulos: [{ ...t0, valorCentavos: 10_000_000_000 }] },
      "VALOR_ACIMA_DO_LIMITE",
      "titulos[0].valorCentavos",
    ],
    [
      "document number too long",
      { ...bra, titulos: [{ ...t0, numeroDocumento: "12345678901" }] },
      "CAMPO_EXCEDE_TAMANHO",
      "titulos[0].numeroDocumento",
    ],
    [
      "CNAB 400 date out of range",
      { ...bra, titulos: [{ ...t0, vencimento: date(2081, 1, 1) }] },
      "DATA_FORA_DO_INTERVALO",
      "titulos[0].vencimento",
    ],
    ["bad CPF", { ...bra, validarDocumentos: true }, "CPF_CNPJ_INVALIDO", "beneficiario.documento"],
    [
      "unfoldable name",
      { ...bra, titulos: [{ ...t0, pagador: { ...t0.pagador, nome: "李小龍" } }] },
      "TEXTO_NAO_CONVERSIVEL",
      "titulos[0].pagador.nome",
    ],
    [
      "missing pagador name",
      { ...bra, titulos: [{ ...t0, pagador: { ...t0.pagador, nome: "" } }] },
      "CAMPO_OBRIGATORIO",
      "titulos[0].pagador.nome",
    ],
    ["unknown bank", { ...bra, banco: "999" }, "BANCO_DESCONHECIDO", "banco"],
    ["no 400 layout", { ...bra, banco: "104" }, "CNAB_LAYOUT_DESCONHECIDO", "banco"],
    ["no títulos", { ...bra, titulos: [] }, "LOTE_VAZIO", "titulos"],
    ["bad date", { ...bra, titulos: [{ ...t0, vencimento: date(2015, 2, 30) }] }, "DATA_INVALIDA", "titulos[0].vencimento"],
    ["bad UF", { ...bra, titulos: [{ ...t0, pagador: { ...t0.pagador, uf: "S" } }] }, "CAMPO_INVALIDO", "titulos[0].pagador.uf"],
  ])("%s → %s", (_n, input, c, f) => {
    expect(code(() => gerarRemessa(input))).toEqual([c, f]);
  });
});

describe("CNAB 400: what a detail has no slot for is refused, never written wrong or dropped", () => {
  const [, bradesco] = GOLDEN[0]!;
  const [, itau] = GOLDEN[1]!;
  const [, bb] = GOLDEN_WITH_DIFFERENCES[0]!;
  const [, santander] = GOLDEN_WITH_DIFFERENCES[1]!;
  const com = (input: RemessaInput, over: Partial<Titulo>): RemessaInput => ({ ...input, titulos: [titulo(over)] });
  it.each<[string, RemessaInput, string]>([
    // a monthly rate (code 2) would land in the slot for a value per day
    ["juros taxa mensal, Itaú", com(itau, { juros: { codigo: "2", valor: 200 } }), "titulos[0].juros.codigo"],
    ["juros isento with a value, Santander", com(santander, { juros: { codigo: "3", valor: 50 } }), "titulos[0].juros.valor"],
    ["juros start date, Bradesco", com(bradesco, { juros: { codigo: "1", valor: 50, data: date(2015, 7, 20) } }), "titulos[0].juros.data"],
    ["multa code Bradesco does not know", com(bradesco, { multa: { codigo: "1", valor: 500 } }), "titulos[0].multa.codigo"],
    ["multa code 2 at Santander (its percentual is 4)", com(santander, { multa: { codigo: "2", valor: 200 } }), "titulos[0].multa.codigo"],
    ["multa date, Bradesco", com(bradesco, { multa: { codigo: "2", valor: 200, data: date(2015, 7, 20) } }), "titulos[0].multa.data"],
    ["desconto percentual", com(itau, { desconto: { codigo: "2", valor: 100, data: HOJE } }), "titulos[0].desconto.codigo"],
    ["protesto, Bradesco", com(bradesco, { protesto: { codigo: "1", dias: 5 } }), "titulos[0].protesto"],
    ["baixa, any bank", com(santander, { baixa: { codigo: "1", dias: 30 } }), "titulos[0].baixa"],
    ["avalista, BB", com(bb, { avalista: PAGADOR("SP") }), "titulos[0].avalista"],
  ])("%s", (_name, input, field) => {
    expect(code(() => gerarRemessa(input))).toEqual(["CAMPO_INVALIDO", field]);
  });

  it("and what has a slot is written: Itaú juros date, Santander multa 4, juros isento without a value", () => {
    const itauOut = gerarRemessa(com(itau, { juros: { codigo: "1", valor: 33, data: date(2015, 7, 16) } })).text.split("\r\n")[1]!;
    expect([itauOut.slice(160, 173), itauOut.slice(385, 391)]).toEqual(["0000000000033", "160715"]);
    expect(() => gerarRemessa(com(santander, { juros: { codigo: "3" }, multa: { codigo: "4", valor: 200 } }))).not.toThrow();
  });
});

describe("PIX in the remessa (Bolepix): Santander CNAB 400's type-8 record, refused where no PIX record is written", () => {
  const [, santander] = GOLDEN_WITH_DIFFERENCES[1]!;
  const comPix = (input: RemessaInput, pix: Titulo["pix"], over: Partial<Titulo> = {}): RemessaInput => ({
    ...input,
    titulos: [titulo({ ...input.titulos[0], ...over, pix })],
  });
  /** Record 8 field by field, positions as in brcobranca's santander_pix spec. */
  const registro8 = (tipoChave: string, chave: string, txid: string, valor: string, seq: number) =>
    [
      "8",
      "00",
      "01",
      "2",
      valor.padStart(13, "0"),
      "10000",
      valor.padStart(13, "0"),
      "10000",
      tipoChave,
      chave.padEnd(77),
      txid.padEnd(35),
      " ".repeat(239),
      String(seq).padStart(6, "0"),
    ].join("");

  it("writes the golden file's header and detail, then record 8, then a trailer counting it (brcobranca's PIX fixture)", () => {
    const plain = gerarRemessa(santander).text.split("\r\n");
    const out = gerarRemessa(comPix(santander, { chave: "12345678910" }));
    expect(out.check.ok).toBe(true);
    const lines = out.text.split("\r\n");
    expect(lines).toHaveLength(5);
    expect(lines.slice(0, 2)).toEqual(plain.slice(0, 2));
    expect(lines[2]).toBe(registro8("1", "12345678910", "", "19990", 3));
    expect(lines[3]).toBe(`9000004${"19990".padStart(13, "0")}${"0".repeat(374)}000004`);
    const lida = lerRemessa(out.text);
    expect(reescreverRemessa(lida)).toBe(out.text);
    expect(lida.titulos).toHaveLength(1);
    expect(lida.titulos[0]!.pix).toMatchObject({ tipoChave: "1", chave: "12345678910" });
  });

  it.each([
    ["CNPJ", "11222333000181", "2"],
    ["phone", "+5511987654321", "3"],
    ["e-mail", "cobranca@example.com.br", "4"],
    ["random key", "123e4567-e12b-12d1-a456-426655440000", "5"],
  ])("numbers a %s key and writes the txid", (_kind, chave, tipo) => {
    const out = gerarRemessa(comPix(santander, { chave, txid: "Fatura2015x6969" }, { valorCentavos: 1234 })).text.split("\r\n");
    expect(out[2]).toBe(registro8(tipo, chave, "Fatura2015x6969", "1234", 3));
  });

  it("one record 8 per título that has PIX; the others have none", () => {
    const titulos = [0, 1, 2].map((i) =>
      titulo({ id: `T${i}`, nossoNumero: String(100 + i), ...(i === 1 ? { pix: { chave: "12345678910" } } : {}) }),
    );
    const lines = gerarRemessa({ ...santander, titulos }).text.split("\r\n");
    expect(lines.slice(0, -1).map((l) => l[0])).toEqual(["0", "1", "1", "8", "1", "9"]);
    expect(lines[3]!.slice(394)).toBe("000004");
    expect(lines[5]!.slice(1, 7)).toBe("000006");
  });

  it.each<[string, Titulo["pix"], string, string]>([
    ["no key", { chave: "" }, "CAMPO_OBRIGATORIO", "titulos[0].pix.chave"],
    ["not a DICT key", { chave: "11 98765-4321" }, "PIX_INVALIDO", "titulos[0].pix.chave"],
    ["a key over 77 characters", { chave: `${"a".repeat(70)}@example.com` }, "CAMPO_EXCEDE_TAMANHO", "titulos[0].pix.chave"],
    ["a CPF key with a wrong check digit", { chave: "12345678901" }, "CPF_CNPJ_INVALIDO", "titulos[0].pix.chave"],
    ["a txid with punctuation", { chave: "11222333000181", txid: "fatura-6969" }, "PIX_INVALIDO", "titulos[0].pix.txid"],
    ["a txid over 35 characters", { chave: "11222333000181", txid: "x".repeat(36) }, "PIX_INVALIDO", "titulos[0].pix.txid"],
  ])("refuses %s", (_name, pix, errorCode, field) => {
    expect(
      code(() =>
        gerarRemessa({
          ...comPix(santander, pix),
          validarDocumentos: true,
          beneficiario: { ...santander.beneficiario, documento: "11222333000181" },
          titulos: [titulo({ pagador: PAGADOR("SP", "52998224725"), pix })],
        }),
      ),
    ).toEqual([errorCode, field]);
  });

  it.each([...GOLDEN, ...GOLDEN_WITH_DIFFERENCES.slice(0, 1)].map(([file, input]) => [file.replace(/^.*brcobranca-/, ""), input] as const))(
    "%s: a título with PIX is refused, not written without it",
    (_file, input) => {
      expect(code(() => gerarRemessa(comPix(input, { chave: "12345678910" })))).toEqual(["CAMPO_INVALIDO", "titulos[0].pix"]);
      expect(() => gerarRemessa(input)).not.toThrow();
    },
  );
});

describe("limits", () => {
  it("a CNAB 240 lote holds at most 33,333 títulos of P+Q+R (5-digit sequence)", () => {
    const [, bb] = GOLDEN[2]!;
    const t = bb.titulos[0]!;
    const many = Array.from({ length: 33_334 }, (_, i) => ({ ...t, id: `id${i}`, nossoNumero: String(i + 1) }));
    expect(() => gerarRemessa({ ...bb, titulos: many })).toThrow(
      expect.objectContaining({ code: "LIMITE_DE_REGISTROS", field: "titulos" }),
    );
  });
});

describe("property: lerRemessa(gerarRemessa(x)) == x", () => {
  const banks: Array<[string, 240 | 400, Partial<RemessaInput["beneficiario"]>]> = [
    ["237", 400, { carteira: "09", convenio: "4567" }],
    ["341", 400, { carteira: "109" }],
    ["001", 400, { convenio: "7654321", carteira: "17", variacao: "019", tipoCobranca: "04DSC" }],
    ["033", 400, { codigoTransmissao: "17777751042700080112" }],
    ["001", 240, { convenio: "1234567", carteira: "17", variacao: "019" }],
    ["756", 240, { convenio: "512231", modalidade: "01" }],
    ["748", 240, {}],
    ["237", 240, {}],
  ];
  it("200 random remessas", () => {
    const r = prng(4242);
    for (let n = 0; n < 200; n++) {
      const [banco, layout, extra] = banks[n % banks.length]!;
      const count = r.int(1, 6);
      const titulos: Titulo[] = Array.from({ length: count }, (_, i) => ({
        id: `B${r.digits(r.int(1, 20))}-${i}`,
        nossoNumero: String(r.int(1, 9_999_999)),
        numeroDocumento: r.digits(r.int(1, 8)),
        vencimento: date(r.int(2024, 2030), r.int(1, 12), r.int(1, 28)),
        emissao: date(2024, r.int(1, 12), r.int(1, 28)),
        valorCentavos: r.int(0, 999_999_999),
        especie: "02",
        pagador: {
          nome: `Cliente ${r.digits(5)} da Silva`,
          documento: r.pick(["52998224725", "11222333000181"]),
          endereco: `Rua ${r.digits(3)}`,
          bairro: "Centro",
          cep: r.digits(8),
          cidade: "Sao Paulo",
          uf: "SP",
        },
      }));
      const input: RemessaInput = {
        banco,
        layout,
        nsa: r.int(1, 999_999),
        geradoEm: { year: 2026, month: r.int(1, 12), day: r.int(1, 28), hour: r.int(0, 23), minute: r.int(0, 59), second: r.int(0, 59) },
        beneficiario: {
          nome: "Empresa Exemplo Ltda",
          documento: "11222333000181",
          agencia: r.digits(4),
          agenciaDv: "1",
          conta: r.digits(5),
          contaDv: "2",
          ...extra,
        },
        titulos,
      };
      const out = gerarRemessa(input);
      expect(checkCnab(out.bytes).ok).toBe(true);
      const lida = lerRemessa(out.bytes);
      // Itaú and Santander 400 headers have no NSA field
      if (!(layout === 400 && (banco === "341" || banco === "033"))) expect(lida.nsa).toBe(input.nsa);
      expect(lida.titulos).toHaveLength(count);
      lida.titulos.forEach((t, i) => {
        const x = titulos[i]!;
        expect(t.id).toBe(x.id);
        const nn = t.nossoNumero!.replace(/\D/g, "");
        expect(Number(nn.slice(banco === "001" && layout === 240 ? 7 : 0, banco === "756" ? 10 : undefined))).toBe(Number(x.nossoNumero));
        expect(t.valorCentavos ?? 0, `${banco}/${layout}`).toBe(x.valorCentavos);
        expect(t.nossoNumero, `${banco}/${layout} ${JSON.stringify(t)}`).toBeDefined();
        expect(t.vencimento).toEqual(x.vencimento);
        expect(t.emissao).toEqual(x.emissao);
        expect(Number(t.numeroDocumento)).toBe(Number(x.numeroDocumento));
        expect(t.pagador).toMatchObject({
          nome: x.pagador.nome.toUpperCase(),
          documento: expect.stringContaining(x.pagador.documento),
          cep: x.pagador.cep,
        });
        // Bradesco 400 packs endereço + cidade + UF into one field (BRAD-400); the others keep UF apart
        if (!(banco === "237" && layout === 400)) expect((t.pagador as { uf?: string }).uf).toBe("SP");
      });
    }
  });
});

describe("documents of 2026 in every remessa layout", () => {
  // Alphanumeric CNPJs (IN RFB 2.229/2024) and numeric ones of the same length: the letters take the
  // digits' places, byte for byte, in every field that carries a CPF/CNPJ.
  const BEN_ALNUM = "12ABC34501DE35";
  const BEN_NUM = "11222333000181";
  const PAG_ALNUM = "A1B2C3D4E5F668";
  const PAG_NUM = "11444777000161";
  // (the PIX golden is left out: its key is the source's CPF 12345678910, whose check digits are wrong)
  const cases = [...GOLDEN, ...GOLDEN_WITH_DIFFERENCES.map(([f, i]) => [f, i] as [string, RemessaInput])].filter(
    ([, i]) => !i.titulos.some((t) => t.pix),
  );
  const withDocs = (input: RemessaInput, ben: string, pag: string, mask = (s: string) => s): RemessaInput => ({
    ...input,
    validarDocumentos: true,
    beneficiario: { ...input.beneficiario, documento: mask(ben) },
    // CNAB 240 carries a sacador/avalista; the 400 details do not
    titulos: input.titulos.map((t) => ({
      ...t,
      pagador: { ...t.pagador, documento: mask(pag) },
      ...(input.layout === 240 ? { avalista: { ...t.pagador, nome: "AVALISTA", documento: mask(pag) } } : {}),
    })),
  });

  it.each(cases)("%s keeps the letters of alphanumeric CNPJs where the digits of numeric ones go", (_file, input) => {
    const alnum = gerarRemessa(
      withDocs(input, BEN_ALNUM, PAG_ALNUM, (s) => `${s.slice(0, 2)}.${s.slice(2, 5)}.${s.slice(5, 8)}/${s.slice(8, 12)}-${s.slice(12)}`),
    ).text;
    const num = gerarRemessa(withDocs(input, BEN_NUM, PAG_NUM)).text;
    // (some CNAB 400 headers carry no beneficiário document at all)
    expect(alnum.includes(BEN_ALNUM)).toBe(num.includes(BEN_NUM));
    expect(alnum).toContain(PAG_ALNUM);
    expect(alnum.replaceAll(BEN_ALNUM, BEN_NUM).replaceAll(PAG_ALNUM, PAG_NUM)).toBe(num);
    expect(checkCnab(alnum).ok).toBe(true);
    const lida = lerRemessa(alnum);
    expect(lida.titulos[0]!.pagador).toMatchObject({ documento: expect.stringMatching(new RegExp(`^0*${PAG_ALNUM}$`)) });
  });

  it("refuses an alphanumeric CNPJ with a wrong check digit, saying so", () => {
    const [, input] = GOLDEN[2]!;
    const bad = withDocs(input, "12ABC34501DE36", PAG_ALNUM);
    expect(code(() => gerarRemessa(bad))).toEqual(["CPF_CNPJ_INVALIDO", "beneficiario.documento"]);
    expect(() => gerarRemessa(bad)).toThrow(/has a wrong check digit/);
    expect(code(() => gerarRemessa(withDocs(input, "12abc34501de35", PAG_ALNUM)))).toEqual(["CPF_CNPJ_INVALIDO", "beneficiario.documento"]);
  });

  // FEBRABAN 240 segment P 63–77 (G064) is X(15): the client's document number is alphanumeric.
  it.each(GOLDEN.filter(([, i]) => i.layout === 240))("%s writes an alphanumeric número do documento", (_file, input) => {
    const out = gerarRemessa({ ...input, titulos: input.titulos.map((t) => ({ ...t, numeroDocumento: "NF-0001" })) });
    const p = out.text.split("\r\n").find((l) => l[13] === "P")!;
    const width = input.banco === "104" ? 11 : 15;
    expect(p.slice(62, 62 + width)).toBe("NF0001".padEnd(width, " "));
    expect(lerRemessa(out.text).titulos[0]!.numeroDocumento).toBe("NF0001");
  });
});
