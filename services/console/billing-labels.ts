// pt-BR wording of the Cobrança pages, kept apart from the components so it can be tested without a browser.
import type { DeliveryStateName, ItemErrorView, ItemStateName, JobKindName, JobStateName, RetryResult } from "./billing-types.js";

export const KIND_LABELS: Record<JobKindName, string> = { boleto: "Boletos", remessa: "Remessa CNAB", retorno: "Retorno CNAB" };

export const JOB_STATE_LABELS: Record<JobStateName, string> = {
  received: "recebido",
  validating: "validando",
  processing: "processando",
  completed: "concluído",
  partially_completed: "parcialmente concluído",
  failed: "falhou",
};

export const ITEM_STATE_LABELS: Record<ItemStateName, string> = {
  pending: "pendente",
  validating: "validando",
  rendering: "gerando",
  completed: "concluído",
  failed: "falhou",
  skipped: "ignorado (duplicado)",
};

export const SUBLOTE_STATE_LABELS: Record<"pending" | "generating" | "completed" | "failed", string> = {
  pending: "pendente",
  generating: "gerando",
  completed: "concluído",
  failed: "falhou",
};

export const DELIVERY_STATE_LABELS: Record<DeliveryStateName, string> = {
  pending: "pendente",
  retrying: "nova tentativa agendada",
  succeeded: "entregue",
  dead_lettered: "desistida (dead letter)",
  skipped: "não enviada (sem endpoint)",
};

/** "350 ms", "1,2 s", "2 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toLocaleString("pt-BR", { maximumFractionDigits: 1 })} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** "812 B", "14,2 KiB", "3,1 MiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) (v /= 1024), u++;
  return `${v.toLocaleString("pt-BR", { maximumFractionDigits: 1 })} ${units[u]}`;
}

/** One line for an item error: "CODE (campo): mensagem", marked when a retry may fix it. */
export function describeError(e: ItemErrorView): string {
  const where = e.field ? ` (${e.field})` : "";
  const message = e.message ? `: ${e.message}` : "";
  return `${e.code}${where}${message}${e.retryable ? " — transitório, reprocessável" : ""}`;
}

/** The answer to "Reprocessar falhas". */
export function describeRetry(r: RetryResult, unit: "item" | "sublote"): string {
  const noun = (n: number) => (unit === "item" ? (n === 1 ? "item" : "itens") : n === 1 ? "sublote" : "sublotes");
  if (r.requeued === 0) return `Nenhum ${noun(1)} reenfileirado: não há falhas reprocessáveis.`;
  return `${r.requeued} ${noun(r.requeued)} reenfileirado${r.requeued === 1 ? "" : "s"}; o job voltou a ${JOB_STATE_LABELS[r.state]}.`;
}
