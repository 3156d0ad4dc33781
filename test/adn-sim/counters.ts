// Call counters, so tests and benchmarks can assert how often "the ADN" was called.

export interface SimCounters {
  total: number;
  byStatus: Record<string, number>;
  /** Calls per client-certificate CNPJ ("none" without a usable certificate). */
  byCnpj: Record<string, number>;
  /** Calls per municipality (IBGE) whose certificate made them, any endpoint. */
  byMunicipio: Record<string, number>;
  /** `/DFe/` calls per feed "ibge/TIPONSU" (contribuintes: "cnpj/CONTRIBUINTE"), by lote. */
  byFeed: Record<string, { batch: number; single: number }>;
  /** `/NFSe/{chave}/Eventos` calls per municipality. */
  eventos: Record<string, number>;
}

export function emptyCounters(): SimCounters {
  return { total: 0, byStatus: {}, byCnpj: {}, byMunicipio: {}, byFeed: {}, eventos: {} };
}

export function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}
