// Bank inputs for every variant and carteira of the bank tables (banks.ts), for tests that must reach each
// one: values of each input's full length that differ from its default, so an input that a caller drops
// shows in the barcode.
import { BANKS, type BankDef, type BankVariant } from "../banks.js";
import type { DadosBancarios } from "../campo-livre.js";

export interface VariantCase {
  readonly name: string;
  readonly bank: BankDef;
  readonly variant: BankVariant;
  readonly carteira?: string;
  readonly dados: DadosBancarios;
}

function digits(len: number, seed: number, avoid?: string): string {
  for (let k = 0; ; k++) {
    const v = Array.from({ length: len }, (_, i) => String(((seed + k + i * 7 + 1) % 9) + 1)).join("");
    if (v !== avoid?.padStart(len, "0")) return v;
  }
}

export function variantCases(): VariantCase[] {
  const out: VariantCase[] = [];
  let n = 0;
  for (const bank of Object.values(BANKS)) {
    for (const variant of bank.variants) {
      const carteiras: readonly (string | undefined)[] = variant.when?.carteiras ?? variant.inputs.carteira?.oneOf ?? [undefined];
      for (const carteira of carteiras) {
        n++;
        const values: Record<string, string> = {};
        for (const [name, spec] of Object.entries(variant.inputs)) {
          if (name === "carteira" && carteira !== undefined) values[name] = carteira;
          else if (spec.oneOf) values[name] = spec.oneOf.find((v) => v !== spec.default) ?? spec.oneOf[0]!;
          else if (name === "convenio" && variant.when?.convenioLength) values[name] = digits(variant.when.convenioLength[0]!, n);
          else if (name === "nossoNumero") {
            const max = Math.min(spec.len, variant.when?.nossoNumeroMaxDigits ?? spec.len);
            values[name] = digits(Math.max(max, variant.when?.nossoNumeroMinDigits ?? 1), n);
          } else values[name] = digits(spec.len, n, spec.default);
        }
        out.push({
          name: `${bank.code} ${variant.id}${carteira ? ` carteira ${carteira}` : ""}`,
          bank,
          variant,
          ...(carteira !== undefined ? { carteira } : {}),
          dados: { banco: bank.code, ...values } as DadosBancarios,
        });
      }
    }
  }
  return out;
}
