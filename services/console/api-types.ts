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
  /** Expiry of the municipality's active certificate, when the vault could be read. */
  certificateNotAfter?: string;
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

/** A page of the Sincronização list; the page is re-read on each refresh, never the whole list. */
export interface FeedsPage extends FeedsResponse {
  /** Pass back as `pageToken` for the next page; absent on the last one. */
  nextPageToken?: string;
}

export interface MunicipioView {
  ibge: string;
  name: string;
  uf: string;
  active: boolean;
}

export interface MunicipiosResponse {
  municipios: MunicipioView[];
}

export interface CancelResponse {
  /** Queued work removed at once. */
  dequeued: boolean;
  /** The running run that was asked to stop after its current batch. */
  runId?: string;
  nothingToCancel: boolean;
}

export type RunOutcomeName = "running" | "caught_up" | "yielded" | "rate_limited" | "failed" | "cancelled" | "abandoned";
export type RunTriggerName = "scheduled" | "sync_now" | "sync_all" | "resume" | "reconciliation" | "unknown";

export interface RunView {
  runId: string;
  trigger: RunTriggerName;
  holder: string;
  startedAt?: string;
  finishedAt?: string;
  lastProgressAt?: string;
  startCursor: string;
  endCursor: string;
  maxNsuSeen: string;
  batches: number;
  documents: number;
  events: number;
  faults: number;
  holesRecorded: number;
  outcome: RunOutcomeName;
  error?: string;
  cancelRequestedBy?: string;
}

export interface QuarantineView {
  id: string;
  nsu: string;
  chave?: string;
  reason: string;
  message: string;
  quarantinedAt?: string;
  runId: string;
}

export interface FeedPage {
  feed: FeedView;
  pool: string;
  currentRunId?: string;
  runs: RunView[];
  moreRuns: boolean;
  quarantine: QuarantineView[];
  moreQuarantine: boolean;
  /** Holes in the stored NSU sequence, first ones only. */
  gaps: { start: string; end: string }[];
  missingNsus: string;
  gapsTruncated: boolean;
  /** When the holes were last looked for (the scan is repeated at most once a minute). */
  gapsCheckedAt: string;
  /** NSUs the ADN confirmed empty (recorded by reconciliation runs). */
  confirmedHoles: number;
}

export type DocumentStatusName = "ativa" | "cancelada" | "substituida" | "analise_pendente" | "desconhecida";

export interface PartyView {
  document: string;
  name: string;
}

export interface DocumentSummary {
  chave: string;
  numero: string;
  nsu: string;
  dhEmi?: string;
  competencia?: string;
  prestador: PartyView;
  tomador: PartyView;
  /** Valor líquido (or do serviço when the note has no vLiq), in cents; absent when the note has neither. */
  valorCents?: number;
  status: DocumentStatusName;
}

export interface DocumentsResponse {
  documents: DocumentSummary[];
  nextPageToken?: string;
}

export interface EventView {
  id: string;
  codigo: string;
  tipo: string;
  nSeq: number;
  dhEvento?: string;
  dhProc?: string;
  autor: string;
  motivo: string;
  chaveSubstituta?: string;
  nsu: string;
}

export interface DocumentDetail extends DocumentSummary {
  versao: string;
  cStat: number;
  dhProc?: string;
  emitente: PartyView;
  servico: { codigo: string; descricao: string };
  localPrestacao: string;
  municipioIncidencia: string;
  issqnCents?: number;
  chaveSubstituta?: string;
  chaveSubstituida?: string;
  xmlSha256: string;
  events: EventView[];
}

export type CertificateStatusName = "active" | "inactive" | "deactivated" | "expired" | "unknown";

export interface CertificateView {
  id: string;
  ibge: string;
  cnpj: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore?: string;
  notAfter?: string;
  status: CertificateStatusName;
  fingerprint: string;
  createdAt?: string;
  deactivationReason?: string;
}

export interface CertificatesResponse {
  certificates: CertificateView[];
}

/** The PFX travels once, base64 in JSON; the password with it, never kept by the browser. */
export interface ImportCertificateBody {
  pfxBase64: string;
  password: string;
}

export interface ImportCertificateResult {
  certificate: CertificateView;
  created: boolean;
  activated: boolean;
  replacedCertificateId?: string;
}
