// The note's status derived from its events (adn.md §5.3). cStat never says whether a note was
// cancelled; only the events do, and they may arrive before, after or without the note.
export interface StatusEvent {
  codigo: string;
  chaveSubstituta: string | null;
}

export interface DerivedStatus {
  situacao: "ATIVA" | "CANCELADA" | "SUBSTITUIDA" | "ANALISE_PENDENTE";
  chaveSubstituta: string | null;
}

const CANCELLING = new Set(["101101", "105104", "305101"]);

export function deriveStatus(events: readonly StatusEvent[]): DerivedStatus {
  const substitution = events.find((e) => e.codigo === "105102");
  // Substitution first: it is a cancellation that also names the replacement, the more useful answer.
  if (substitution) return { situacao: "SUBSTITUIDA", chaveSubstituta: substitution.chaveSubstituta };
  if (events.some((e) => CANCELLING.has(e.codigo))) return { situacao: "CANCELADA", chaveSubstituta: null };
  // Each e105105 (denied) answers one e101103 (request); counting instead of ordering by time keeps the
  // result independent of the order in which the ADN distributed them.
  const requests = events.filter((e) => e.codigo === "101103").length;
  const denials = events.filter((e) => e.codigo === "105105").length;
  if (requests > denials) return { situacao: "ANALISE_PENDENTE", chaveSubstituta: null };
  return { situacao: "ATIVA", chaveSubstituta: null };
}
