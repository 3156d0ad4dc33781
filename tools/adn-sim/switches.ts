// Behaviour switches of the simulator, settable at start, through `configure()` or the admin endpoint.

/**
 * How an item is corrupted. The first six break its transport or its XML; the "poison" ones are well-formed
 * notes with a value the layout does not allow (a 70,000-character description, a rate of 1000 %, a CNPJ in
 * lower case, a name of 301 characters, an IBS/CBS amount that is not a number), which a store that trusted
 * them would fail to write on every run.
 */
export type ItemFault =
  | "truncated-gzip"
  | "bad-base64"
  | "malformed-xml"
  | "dtd"
  | "bomb"
  | "missing-nsu"
  | "poison-long-description"
  | "poison-huge-rate"
  | "poison-lowercase-cnpj"
  | "poison-long-name"
  | "poison-bad-ibscbs";

export interface SimSwitches {
  /** Items per `lote=true` batch (the manual says 50, the municipal OAS 100). */
  pageSize: number;
  /** `GET /DFe/{N}` starts at N (OAS) instead of after N (observed on /contribuintes). */
  startInclusive: boolean;
  /** Time from a request's arrival to its answer (rendering included; a slower render answers later). */
  latencyMs: number;
  /** Each answer's latency varies uniformly within ± this (a fleet bench's realistic spread; 0 = none). */
  latencyJitterMs: number;
  /** `TipoAmbiente` in every envelope (flip it to test the gateway's ambiente fence). */
  tipoAmbiente: "HOMOLOGACAO" | "PRODUCAO";
  /** 429 HTML once a certificate made more than `maxCalls` calls in the current `windowMs` window. */
  rateLimit: { maxCalls: number; windowMs: number } | null;
  /** Share of calls answered 503 HTML (seeded). */
  error503Rate: number;
  /** The next N calls answer 503 HTML. */
  fail503Next: number;
  /** Share of calls that never answer (seeded) — the client's timeout fires. */
  hangRate: number;
  /** The next N calls never answer. */
  hangNext: number;
  /** How long a hanging call holds the socket before it is cut. */
  hangMs: number;
  /** The next N JSON answers are cut off in the middle of the body (connection reset mid-response). */
  cutNext: number;
  /** Share of items (decided per NSU) with each corruption. */
  truncatedGzipRate: number;
  badBase64Rate: number;
  malformedXmlRate: number;
  /** Corruption of specific NSUs ("123": "bomb"). */
  faultsByNsu: Record<string, ItemFault>;
  /** Uncompressed size of the "bomb" item. */
  bombBytes: number;
  /** Share of items sent twice in the same batch (decided per NSU). */
  duplicateRate: number;
  /** Every `calls` batch calls on a feed, `count` new documents are appended to it first. */
  appendEvery: { calls: number; count: number } | null;
}

export const DEFAULT_SWITCHES: SimSwitches = {
  pageSize: 50,
  startInclusive: false,
  latencyMs: 0,
  latencyJitterMs: 0,
  tipoAmbiente: "HOMOLOGACAO",
  rateLimit: null,
  error503Rate: 0,
  fail503Next: 0,
  hangRate: 0,
  hangNext: 0,
  hangMs: 120_000,
  cutNext: 0,
  truncatedGzipRate: 0,
  badBase64Rate: 0,
  malformedXmlRate: 0,
  faultsByNsu: {},
  bombBytes: 16 * 1024 * 1024,
  duplicateRate: 0,
  appendEvery: null,
};
