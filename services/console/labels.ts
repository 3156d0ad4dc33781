// pt-BR wording of the console, kept apart from the components so it can be tested without a browser.
import type { DecisionView, FeedStateName, FeedView, Role, SkipReasonName } from "./api-types.js";

export const ROLE_LABELS: Record<Role, string> = { "read-only": "somente leitura", operator: "operador", admin: "administrador" };

export const STATE_LABELS: Record<FeedStateName, string> = {
  idle: "pronto",
  queued: "na fila",
  running: "em execução",
  waiting: "aguardando",
  cooling_down: "em resfriamento",
  disabled: "desativado",
  error: "erro",
};

/** "14:05", or "02/12 14:05" when the instant is not on the same day as `now`. */
export function formatInstant(iso: string, now: Date, timeZone?: string): string {
  const at = new Date(iso);
  const opts = timeZone ? { timeZone } : {};
  const day = (d: Date) => d.toLocaleDateString("pt-BR", { ...opts, day: "2-digit", month: "2-digit", year: "numeric" });
  const time = at.toLocaleTimeString("pt-BR", { ...opts, hour: "2-digit", minute: "2-digit" });
  if (day(at) === day(now)) return time;
  return `${at.toLocaleDateString("pt-BR", { ...opts, day: "2-digit", month: "2-digit" })} ${time}`;
}

/** The state column: "aguardando até 14:05", "em resfriamento até 14:05", "erro até 14:05"… */
export function describeState(feed: FeedView, now: Date, timeZone?: string): string {
  const label = STATE_LABELS[feed.state];
  const until =
    feed.state === "cooling_down"
      ? feed.cooldownUntil
      : feed.state === "waiting" || feed.state === "error"
        ? feed.nextEligibleAt
        : undefined;
  return until ? `${label} até ${formatInstant(until, now, timeZone)}` : label;
}

const REASONS: Record<SkipReasonName, (d: DecisionView, at: string) => string> = {
  not_eligible: (_d, at) => `aguardando até ${at} — regra de 1 hora do ADN`,
  cooling_down: (_d, at) => `em resfriamento até ${at} — o ADN respondeu 429 (excesso de requisições)`,
  lease_held: (d) => `já em execução${d.leaseHolder ? ` por ${d.leaseHolder}` : ""}`,
  already_queued: () => "já está na fila",
  feed_disabled: () => "feed desativado",
  municipality_inactive: () => "município inativo",
  no_active_certificate: () => "sem certificado ativo e válido no cofre",
  unknown: () => "recusado pelo coordenador",
};

/** Why the coordinator did not accept a feed, in the operator's words; "" when it was accepted. */
export function describeDecision(d: DecisionView, now: Date, timeZone?: string): string {
  if (d.accepted) return "";
  const at = d.notBefore ? formatInstant(d.notBefore, now, timeZone) : "?";
  return REASONS[d.reason ?? "unknown"](d, at);
}

/** One line for a SyncNow/SyncAll answer. */
export function summarizeSync(accepted: number, skipped: number): string {
  const feeds = (n: number) => `${n} ${n === 1 ? "feed" : "feeds"}`;
  return `${feeds(accepted)} na fila, ${feeds(skipped)} recusado${skipped === 1 ? "" : "s"}`;
}
