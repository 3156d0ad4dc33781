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
  /**
   * Most `/municipios/DFe/` calls of one feed ever in flight at the same time: 1 when a single
   * consumer holds each feed, as the ADN expects (two consumers of one NSU series is what gets a
   * CNPJ blocked).
   */
  maxConcurrentByFeed: Record<string, number>;
  /**
   * Every call in arrival order: when it arrived (epoch ms), the client certificate's CNPJ ("none"),
   * the path and the HTTP status it was answered with (0 while unanswered or never answered), so
   * tests can check that nothing called inside a cool-down or a spacing.
   */
  log: SimCall[];
}

export interface SimCall {
  at: number;
  cnpj: string;
  path: string;
  status: number;
}

export function emptyCounters(): SimCounters {
  return { total: 0, byStatus: {}, byCnpj: {}, byMunicipio: {}, byFeed: {}, eventos: {}, maxConcurrentByFeed: {}, log: [] };
}

export function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}
