/**
 * Deterministic sub-batches (seeds 002/003): títulos grouped by (banco, layout, convênio, carteira,
 * conta, agência, variação, pix), groups and items in a stable order, split by size limits. Same input
 * (in any order) → same groups → same files and sha256, once NSA and timestamp are injected.
 */
import { fail } from "./errors.js";

export interface ChaveAgrupamento {
  readonly banco: string;
  readonly layout: 240 | 400;
  readonly convenio?: string;
  readonly carteira?: string;
  readonly conta?: string;
  readonly agencia?: string;
  readonly variacao?: string;
  /** Título carries a PIX QR (Bolepix): separate files, banks send these with other records. */
  readonly pix?: boolean;
}

export interface ItemAgrupavel extends ChaveAgrupamento {
  /** Our boleto id: the stable sort key inside a group. */
  readonly id: string;
  readonly nossoNumero?: string;
}

export interface SubLote<T extends ItemAgrupavel> {
  /** Stable id: the grouping key plus the part number, e.g. "237|400|123|09|0012345|1234||0#1". */
  readonly id: string;
  readonly chave: Required<Omit<ChaveAgrupamento, "pix">> & { readonly pix: boolean };
  /** 1-based part number within the group, and the number of parts. */
  readonly parte: number;
  readonly partes: number;
  readonly itens: readonly T[];
}

/** Records per título (CNAB 240: P+Q+R; CNAB 400: detalhe + optional record). */
export interface LimitesSubLote {
  readonly maxTitulos?: number;
  readonly registrosPorTitulo?: number;
}

/** The hard limits: CNAB 240 lote ≤ 99,999 details (5-digit sequence); any file ≤ 999,999 lines (6-digit counters). */
export function maxTitulosPorArquivo(layout: 240 | 400, registrosPorTitulo: number): number {
  if (layout === 240) return Math.min(Math.floor(99_999 / registrosPorTitulo), Math.floor((999_999 - 4) / registrosPorTitulo));
  return Math.floor((999_999 - 2) / registrosPorTitulo);
}

const norm = (s: string | undefined) => (s ?? "").trim();

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function agruparSubLotes<T extends ItemAgrupavel>(itens: readonly T[], limites: LimitesSubLote = {}): SubLote<T>[] {
  if (!Array.isArray(itens)) fail("CAMPO_INVALIDO", "itens must be an array", "itens");
  const ids = new Map<string, number>();
  const nns = new Map<string, number>();
  const grupos = new Map<string, { chave: SubLote<T>["chave"]; itens: T[] }>();
  itens.forEach((it, i) => {
    if (!it || typeof it.id !== "string" || it.id === "") fail("CAMPO_OBRIGATORIO", "id is required", `itens[${i}].id`);
    if (!/^\d{3}$/.test(it.banco ?? "")) fail("CAMPO_INVALIDO", "banco must be 3 digits", `itens[${i}].banco`);
    if (it.layout !== 240 && it.layout !== 400) fail("CNAB_LAYOUT_DESCONHECIDO", "layout must be 240 or 400", `itens[${i}].layout`);
    if (ids.has(it.id)) fail("CAMPO_INVALIDO", `duplicate id ${it.id} (also itens[${ids.get(it.id)}])`, `itens[${i}].id`);
    ids.set(it.id, i);
    const chave = {
      banco: it.banco,
      layout: it.layout,
      convenio: norm(it.convenio),
      carteira: norm(it.carteira),
      conta: norm(it.conta),
      agencia: norm(it.agencia),
      variacao: norm(it.variacao),
      pix: it.pix === true,
    };
    const key = [
      chave.banco,
      chave.layout,
      chave.convenio,
      chave.carteira,
      chave.conta,
      chave.agencia,
      chave.variacao,
      chave.pix ? 1 : 0,
    ].join("|");
    if (it.nossoNumero !== undefined) {
      const nk = `${chave.banco}|${chave.convenio}|${chave.agencia}|${chave.conta}|${chave.carteira}|${norm(it.nossoNumero).replace(/^0+(?=\d)/, "")}`;
      if (nns.has(nk))
        fail(
          "CAMPO_INVALIDO",
          `nosso número ${it.nossoNumero} repeated for the same convênio (itens[${nns.get(nk)}])`,
          `itens[${i}].nossoNumero`,
        );
      nns.set(nk, i);
    }
    let g = grupos.get(key);
    if (!g) grupos.set(key, (g = { chave, itens: [] }));
    g.itens.push(it);
  });
  const out: SubLote<T>[] = [];
  for (const key of [...grupos.keys()].sort(compare)) {
    const g = grupos.get(key)!;
    const sorted = [...g.itens].sort((a, b) => compare(a.id, b.id));
    const porTitulo = limites.registrosPorTitulo ?? (g.chave.layout === 240 ? 3 : 2);
    const hard = maxTitulosPorArquivo(g.chave.layout, porTitulo);
    const max = Math.min(limites.maxTitulos ?? hard, hard);
    if (!Number.isInteger(max) || max < 1) fail("CAMPO_INVALIDO", "maxTitulos must be a positive integer", "limites.maxTitulos");
    const partes = Math.ceil(sorted.length / max);
    for (let p = 0; p < partes; p++)
      out.push({ id: `${key}#${p + 1}`, chave: g.chave, parte: p + 1, partes, itens: sorted.slice(p * max, (p + 1) * max) });
  }
  return out;
}

/** Give each sub-batch the next NSA, in the stable order (the caller allocates the range transactionally). */
export function atribuirNsa<T extends ItemAgrupavel>(
  subLotes: readonly SubLote<T>[],
  primeiroNsa: number,
): Array<SubLote<T> & { nsa: number }> {
  if (!Number.isSafeInteger(primeiroNsa) || primeiroNsa < 1) fail("CAMPO_INVALIDO", "NSA must be a positive integer", "primeiroNsa");
  return subLotes.map((s, i) => ({ ...s, nsa: primeiroNsa + i }));
}
