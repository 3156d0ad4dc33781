// CNPJ and CPF check digits (Receita Federal rules), used to validate parties and to generate test data.

function dv(digits: string, weights: number[]): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += (digits.charCodeAt(i) - 48) * (weights[i] ?? 0);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

const CNPJ_W1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_W2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

/** Appends the two check digits to a 12-digit CNPJ base. */
export function completeCnpj(base12: string): string {
  const d1 = dv(base12, CNPJ_W1);
  const d2 = dv(base12 + d1, CNPJ_W2);
  return `${base12}${d1}${d2}`;
}

/** Appends the two check digits to a 9-digit CPF base. */
export function completeCpf(base9: string): string {
  const d1 = dv(base9, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = dv(base9 + d1, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${base9}${d1}${d2}`;
}

export function isValidCnpj(cnpj: string): boolean {
  return /^\d{14}$/.test(cnpj) && !/^(\d)\1{13}$/.test(cnpj) && completeCnpj(cnpj.slice(0, 12)) === cnpj;
}

export function isValidCpf(cpf: string): boolean {
  return /^\d{11}$/.test(cpf) && !/^(\d)\1{10}$/.test(cpf) && completeCpf(cpf.slice(0, 9)) === cpf;
}
