// pt-BR wording of the feed, Documentos and Certificados pages, kept apart from the components so it can be
// tested without a browser.
import type {
  AmbienteName,
  CancelResponse,
  CertificateStatusName,
  DocumentStatusName,
  FeedView,
  RunOutcomeName,
  RunTriggerName,
  RunView,
  TipoNsuName,
} from "./api-types.js";

export const AMBIENTE_LABELS: Record<AmbienteName, string> = { producao: "produção", producao_restrita: "produção restrita" };
export const TIPO_LABELS: Record<TipoNsuName, string> = { distribuicao: "distribuição", recepcao: "recepção", geral: "geral", mei: "MEI" };

export const OUTCOME_LABELS: Record<RunOutcomeName, string> = {
  running: "em execução",
  caught_up: "em dia",
  yielded: "pausada (continua)",
  rate_limited: "limitada (429)",
  failed: "falhou",
  cancelled: "cancelada",
  abandoned: "abandonada",
};

export const TRIGGER_LABELS: Record<RunTriggerName, string> = {
  scheduled: "agendada",
  sync_now: "Sincronizar",
  sync_all: "Sincronizar tudo",
  resume: "continuação",
  reconciliation: "reconciliação",
  unknown: "—",
};

export const FAULT_LABELS: Record<string, string> = {
  bad_base64: "Base64 inválido",
  bad_gzip: "gzip inválido",
  too_large: "grande demais",
  bad_xml: "XML malformado",
  missing_field: "campo ausente",
  unknown_document_type: "tipo de documento desconhecido",
  invalid_value: "valor inválido",
  unknown: "desconhecido",
};

export const DOCUMENT_STATUS_LABELS: Record<DocumentStatusName, string> = {
  ativa: "ativa",
  cancelada: "cancelada",
  substituida: "substituída",
  analise_pendente: "análise fiscal pendente",
  desconhecida: "—",
};

export const CERTIFICATE_STATUS_LABELS: Record<CertificateStatusName, string> = {
  active: "ativo",
  inactive: "inativo (substituído)",
  deactivated: "desativado",
  expired: "vencido",
  unknown: "—",
};

/** The console's path of a feed's page. */
export const feedPath = (f: Pick<FeedView, "ibge" | "ambiente" | "tipoNsu">): string => `/feeds/${f.ibge}/${f.ambiente}/${f.tipoNsu}`;

/** "45 s", "3 min 05 s", "2 h 10 min"; `end` defaults to now for a run in progress. */
export function formatDuration(startIso: string | undefined, endIso: string | undefined, now: Date): string {
  if (!startIso) return "—";
  const ms = Math.max(0, (endIso ? new Date(endIso) : now).getTime() - new Date(startIso).getTime());
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** How far a run went: "NSU 0 → 350 de 400 (87%)"; without a known maximum, just the cursors. */
export function describeProgress(r: Pick<RunView, "startCursor" | "endCursor" | "maxNsuSeen">): string {
  const start = BigInt(r.startCursor);
  const end = BigInt(r.endCursor);
  const max = BigInt(r.maxNsuSeen);
  const base = `NSU ${r.startCursor} → ${r.endCursor}`;
  if (max <= start) return base;
  const pct = Number(((end - start) * 100n) / (max - start));
  return `${base} de ${r.maxNsuSeen} (${Math.min(100, pct)}%)`;
}

/** "01/12/2026 14:05" in the browser's time zone; "—" when absent. */
export function formatDateTime(iso: string | undefined, timeZone?: string): string {
  if (!iso) return "—";
  const opts = timeZone ? { timeZone } : {};
  const at = new Date(iso);
  return `${at.toLocaleDateString("pt-BR", { ...opts, day: "2-digit", month: "2-digit", year: "numeric" })} ${at.toLocaleTimeString("pt-BR", { ...opts, hour: "2-digit", minute: "2-digit" })}`;
}

export function formatCents(cents: number | undefined): string {
  if (cents === undefined) return "—";
  return (cents / 100).toLocaleString("pt-BR", { style: "currency", currency: "BRL" });
}

/** CNPJ 12.345.678/0001-95 (alphanumeric ones too), CPF 123.456.789-09; anything else as it came. */
export function formatTaxId(doc: string): string {
  if (/^[0-9A-Z]{12}[0-9]{2}$/.test(doc))
    return `${doc.slice(0, 2)}.${doc.slice(2, 5)}.${doc.slice(5, 8)}/${doc.slice(8, 12)}-${doc.slice(12)}`;
  if (/^[0-9]{11}$/.test(doc)) return `${doc.slice(0, 3)}.${doc.slice(3, 6)}.${doc.slice(6, 9)}-${doc.slice(9)}`;
  return doc;
}

const DAY_MS = 86_400_000;

/** Whole days from `now` to the certificate's expiry: negative once it has expired. */
export const daysToExpiry = (notAfterIso: string, now: Date): number =>
  Math.floor((new Date(notAfterIso).getTime() - now.getTime()) / DAY_MS);

export function describeExpiry(notAfterIso: string | undefined, now: Date): string {
  if (!notAfterIso) return "—";
  const days = daysToExpiry(notAfterIso, now);
  if (new Date(notAfterIso).getTime() <= now.getTime()) return `venceu há ${Math.max(1, -days)} dia${-days > 1 ? "s" : ""}`;
  if (days === 0) return "vence hoje";
  return `vence em ${days} dia${days === 1 ? "" : "s"}`;
}

/** Certificates expiring within this many days are flagged on the page. */
export const EXPIRY_WARNING_DAYS = 30;

export function describeCancel(res: CancelResponse): string {
  if (res.dequeued) return "cancelada: retirada da fila";
  if (res.runId) return "cancelamento pedido: a execução para ao fim do lote atual";
  return "nada a cancelar: o feed não está na fila nem em execução";
}
