// Test inputs shared by the billing tests: valid boletos of a few banks and ways to break one.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { DateSchema } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { BoletoSchema, ContaCobrancaSchema, type Boleto, type ContaCobranca } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { TaxIdKind } from "../../../libs/gen/malha/common/v1/common_pb.js";
import type { VariantCase } from "../../../libs/cobranca/testing/variants.js";

export const CPF_VALIDO = "52998224725";
export const CNPJ_VALIDO = "11222333000181";

export function boletoValido(n: number, overrides: Omit<MessageInitShape<typeof BoletoSchema>, "$typeName"> = {}): Boleto {
  return create(BoletoSchema, {
    externalId: `t-${String(n).padStart(4, "0")}`,
    conta: { banco: "237", agencia: "1234", carteira: "09", conta: "0012345" },
    nossoNumero: String(1000 + n),
    numeroDocumento: `DOC${n}`,
    valorCents: BigInt(10_000 + n),
    vencimento: { year: 2026, month: 12, day: 15 },
    pagador: {
      name: `Pagador ${n}`,
      document: { kind: TaxIdKind.CPF, number: CPF_VALIDO },
      address: { street: "Rua A", number: "1", city: "Sao Paulo", uf: "SP", cep: "01001000" },
    },
    beneficiario: {
      name: "Empresa Exemplo Ltda",
      document: { kind: TaxIdKind.CNPJ, number: CNPJ_VALIDO },
      address: { street: "Av. Paulista", number: "1000", district: "Bela Vista", city: "Sao Paulo", uf: "SP", cep: "01310100" },
    },
    instrucoes: ["Nao receber apos o vencimento"],
    ...overrides,
  });
}

/** Ways an item fails deep validation, each with the code the worker reports. */
export const INVALIDOS: { code: string; mutate: (b: Boleto) => void }[] = [
  { code: "CPF_CNPJ_INVALIDO", mutate: (b) => (b.pagador!.document!.number = "12345678900") },
  { code: "BANCO_DESCONHECIDO", mutate: (b) => (b.conta!.banco = "999") },
  { code: "DATA_FORA_DO_INTERVALO", mutate: (b) => (b.vencimento = create(DateSchema, { year: 1999, month: 1, day: 1 })) },
];

export function boletoInvalido(n: number, k: number): Boleto {
  const b = boletoValido(n);
  INVALIDOS[k % INVALIDOS.length]!.mutate(b);
  return b;
}

/** Where the contract holds each engine input (libs/cobranca DadosBancarios): a ContaCobranca or a Boleto field. */
const CONTA_FIELDS = [
  "convenio",
  "carteira",
  "agencia",
  "conta",
  "posto",
  "modalidade",
  "ano",
  "byteGeracao",
  "codigoCliente",
  "tipoCobranca",
  "emissao",
  "ios",
  "produto",
] as const;
const BOLETO_FIELDS = ["nossoNumero", "seuNumero", "parcela"] as const;
type ContaField = (typeof CONTA_FIELDS)[number] & keyof ContaCobranca;
type BoletoField = (typeof BOLETO_FIELDS)[number] & keyof Boleto;

/**
 * A valid boleto of one bank variant (libs/cobranca/testing/variants.ts), every bank input in its contract
 * field; throws when the engine needs an input the contract has no field for.
 */
export function boletoDaVariante(
  v: VariantCase,
  n: number,
  overrides: Omit<MessageInitShape<typeof BoletoSchema>, "$typeName"> = {},
): Boleto {
  const b = boletoValido(n, { nossoNumero: "", ...overrides });
  b.conta = create(ContaCobrancaSchema, { banco: v.bank.code });
  for (const [name, value] of Object.entries(v.dados)) {
    if (name === "banco") continue;
    if ((CONTA_FIELDS as readonly string[]).includes(name)) b.conta[name as ContaField] = value as string;
    else if ((BOLETO_FIELDS as readonly string[]).includes(name)) b[name as BoletoField] = value as string;
    else throw new Error(`bank ${v.bank.code} variant ${v.variant.id}: the engine input ${name} has no field in the contract`);
  }
  return b;
}
