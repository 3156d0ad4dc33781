// CNAB inputs: a CNAB 240 remessa of n títulos (Banco do Brasil profile, the golden file's
// beneficiário), and a synthetic CNAB 240 retorno grown from a golden file's detail records.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { date, type RemessaInput, type Titulo } from "../../libs/cobranca/index.js";
import { CNAB_FIXTURES } from "../../libs/cobranca/testing/fixtures.js";

export function remessaInput(n: number): RemessaInput {
  const titulos: Titulo[] = Array.from({ length: n }, (_, i) => ({
    id: `t-${i + 1}`,
    nossoNumero: String(i + 1),
    numeroDocumento: String(i + 1),
    vencimento: date(2026, 12, 15),
    emissao: date(2026, 11, 29),
    valorCentavos: 10_000 + i,
    especie: "02",
    pagador: {
      nome: `PAGADOR ${i + 1}`,
      documento: "52998224725",
      endereco: "RUA A 1",
      bairro: "CENTRO",
      cep: "01001000",
      cidade: "SAO PAULO",
      uf: "SP",
    },
  }));
  return {
    banco: "001",
    layout: 240,
    nsa: 1,
    geradoEm: { year: 2026, month: 11, day: 29, hour: 12, minute: 0, second: 0 },
    beneficiario: {
      nome: "EMPRESA EXEMPLO LTDA",
      documento: "11222333000181",
      convenio: "1234567",
      carteira: "12",
      variacao: "123",
      agencia: "1234",
      agenciaDv: "3",
      conta: "12345",
      contaDv: "5",
    },
    titulos,
  };
}

const GOLDEN_240 = join(CNAB_FIXTURES, "retorno/240/laravel-boleto-104-caixa.ret");
const num = (n: number, width: number) => String(n).padStart(width, "0");
const put = (line: string, from: number, value: string) => line.slice(0, from - 1) + value + line.slice(from - 1 + value.length);

/**
 * A CNAB 240 retorno of exactly `lines` lines: file header, one lote whose T/U detail pairs repeat the
 * golden file's (sequence numbers 9–13 renumbered), lote trailer (records 18–23) and file trailer
 * (lotes 18–23, records 24–29) fixed. One lote holds at most 99 999 details, so lines ≤ 100 003.
 */
export function retorno240(lines: number, path = GOLDEN_240): string {
  const all = readFileSync(path, "latin1")
    .split(/\r?\n/)
    .filter((l) => l.length > 0);
  const kind = (l: string) => l[7];
  const header = all.filter((l) => kind(l) === "0")[0]!;
  const loteHeader = all.find((l) => kind(l) === "1")!;
  const details = all.filter((l) => kind(l) === "3");
  const loteTrailer = all.find((l) => kind(l) === "5")!;
  const fileTrailer = all.find((l) => kind(l) === "9")!;
  const n = lines - 4;
  if (n < 2 || n % 2 !== 0 || n > 99_999) throw new Error(`retorno240: ${lines} lines do not make whole T/U pairs in one lote`);
  const out: string[] = [header, loteHeader];
  for (let i = 0; i < n; i++) out.push(put(details[i % details.length]!, 9, num(i + 1, 5)));
  out.push(put(loteTrailer, 18, num(n + 2, 6)));
  out.push(put(put(fileTrailer, 18, num(1, 6)), 24, num(lines, 6)));
  return out.join("\r\n") + "\r\n";
}
