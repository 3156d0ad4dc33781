declare module "boleto-brasileiro-validator" {
  export function boleto(code: string, strict?: boolean): boolean;
  export function boletoBancario(code: string, strict?: boolean): boolean;
  export function boletoBancarioCodigoBarras(code: string): boolean;
  export function boletoBancarioLinhaDigitavel(code: string, strict?: boolean): boolean;
  export function boletoArrecadacao(code: string, strict?: boolean): boolean;
}
