// The boletos rendered by both PDF renderers: Bradesco carteira 09 (a bank the peer supports), with
// due and document dates in 2023 because the peer refuses years ≥ 2024 and fatores past 2025-02-21.
import { gerarBoleto, type CalendarDate, type FichaInput } from "../../libs/cobranca/index.js";

interface Pessoa {
  nome: string;
  documento: string;
  endereco: string;
  bairro: string;
  cidade: string;
  uf: string;
  cep: string;
}

/** One boleto in plain data, convertible to either library's input. */
export interface PeerBoleto {
  agencia: string;
  conta: string;
  carteira: string;
  nossoNumero: string;
  nossoNumeroDv: string;
  numeroDocumento: string;
  valorCentavos: number;
  vencimento: CalendarDate;
  emissao: CalendarDate;
  pagador: Pessoa;
  beneficiario: Pessoa;
  instrucoes: string[];
}

const BENEFICIARIO: Pessoa = {
  nome: "Empresa Exemplo Ltda",
  documento: "11222333000181",
  endereco: "Av. Paulista, 1000",
  bairro: "Bela Vista",
  cidade: "Sao Paulo",
  uf: "SP",
  cep: "01310100",
};

export interface Pair {
  data: PeerBoleto;
  ficha: FichaInput;
  /** Our linha digitável (digits), to compare with the peer's. */
  linha: string;
}

export function boletoPair(n: number): Pair {
  const vencimento = { year: 2023, month: 1 + (n % 12), day: 1 + (n % 28) };
  const emissao = { year: 2023, month: 1, day: 2 };
  const valorCentavos = 10_000 + n;
  const boleto = gerarBoleto({
    dados: { banco: "237", agencia: "1234", carteira: "09", nossoNumero: String(1000 + n), conta: "0012345" },
    vencimento,
    valorCentavos,
  });
  const printed = boleto.nossoNumeroImpresso;
  const data: PeerBoleto = {
    agencia: "1234",
    conta: "0012345",
    carteira: "09",
    nossoNumero: String(1000 + n),
    nossoNumeroDv: printed.slice(printed.lastIndexOf("-") + 1),
    numeroDocumento: `DOC${n}`,
    valorCentavos,
    vencimento,
    emissao,
    pagador: {
      nome: `Pagador ${n}`,
      documento: "52998224725",
      endereco: "Rua A, 1",
      bairro: "Centro",
      cidade: "Sao Paulo",
      uf: "SP",
      cep: "01001000",
    },
    beneficiario: BENEFICIARIO,
    instrucoes: ["Nao receber apos o vencimento"],
  };
  const ficha: FichaInput = {
    boleto,
    beneficiario: BENEFICIARIO,
    pagador: data.pagador,
    numeroDocumento: data.numeroDocumento,
    especieDocumento: "DM",
    aceite: "N",
    dataDocumento: emissao,
    dataProcessamento: emissao,
    instrucoes: data.instrucoes,
  };
  return { data, ficha, linha: boleto.linhaDigitavel };
}
