// The console's JSON API, shared by the server (services/console) and the web app (services/console/web).
// Timestamps are ISO-8601 strings, NSUs decimal strings (uint64 does not fit a JSON number).

/** Each role can do what the one before it can: operators press buttons, administrators also import certificates. */
export const ROLES = ["read-only", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** POSTs without this header are refused: a cross-site form cannot set it, so it stops CSRF. */
export const CSRF_HEADER = "x-malha-console";

export interface Me {
  user: string;
  role: Role;
  /** True for operators and administrators: they may press buttons. */
  canAct: boolean;
  /** True for administrators: they may import certificates. */
  canAdmin: boolean;
}

export interface SignInRequest {
  user: string;
  token: string;
}

/** The coordinator's feed states, plus "error" for a feed waiting after a failed run. */
export type FeedStateName = "idle" | "queued" | "running" | "waiting" | "cooling_down" | "disabled" | "error";
export type AmbienteName = "producao" | "producao_restrita";
export type TipoNsuName = "distribuicao" | "recepcao" | "geral" | "mei";

export interface FeedView {
  ibge: string;
  /** Municipality name and UF from the store; empty when the store did not answer. */
  name: string;
  uf: string;
  ambiente: AmbienteName;
  tipoNsu: TipoNsuName;
  state: FeedStateName;
  cursor: string;
  maxNsu: string;
  documents: number;
  events: number;
  faults: number;
  lastSuccessAt?: string;
  lastErrorAt?: string;
  lastError?: string;
  nextEligibleAt?: string;
  cooldownUntil?: string;
  leaseHolder?: string;
  hasActiveCertificate: boolean;
}

export interface FeedsResponse {
  feeds: FeedView[];
  /** Server time of the snapshot, so the page can say "atualizado às …". */
  at: string;
}

export type SkipReasonName =
  | "lease_held"
  | "already_queued"
  | "not_eligible"
  | "cooling_down"
  | "feed_disabled"
  | "municipality_inactive"
  | "no_active_certificate"
  | "unknown";

export interface DecisionView {
  ibge: string;
  ambiente: AmbienteName;
  tipoNsu: TipoNsuName;
  accepted: boolean;
  reason?: SkipReasonName;
  /** For not_eligible / cooling_down: the first instant the feed would be accepted. */
  notBefore?: string;
  leaseHolder?: string;
}

export interface SyncResponse {
  accepted: number;
  skipped: number;
  decisions: DecisionView[];
}

export interface ApiError {
  error: { code: string; message: string };
}
