// "Sincronização": every feed with its state, refreshed every few seconds, and the sync buttons.
import { useEffect, useMemo, useState } from "preact/hooks";
import type { FeedStateName, FeedView, Me, SyncResponse } from "../api-types.js";
import { describeDecision, describeState, formatInstant, STATE_LABELS, summarizeSync } from "../labels.js";
import { api, ApiFailure } from "./api.js";

const REFRESH_MS = 2000;
const AMBIENTE_LABELS = { producao: "produção", producao_restrita: "produção restrita" } as const;
const TIPO_LABELS = { distribuicao: "distribuição", recepcao: "recepção", geral: "geral", mei: "MEI" } as const;

interface Filters {
  text: string;
  uf: string;
  state: FeedStateName | "";
}

function matches(f: FeedView, filters: Filters): boolean {
  const text = filters.text.trim().toLocaleLowerCase("pt-BR");
  if (text && !f.ibge.includes(text) && !f.name.toLocaleLowerCase("pt-BR").includes(text)) return false;
  if (filters.uf && f.uf !== filters.uf) return false;
  if (filters.state && f.state !== filters.state) return false;
  return true;
}

/** A refusal's reasons, one per refused feed, or the accepted count. */
function outcome(res: SyncResponse, now: Date): string {
  const refused = [...new Set(res.decisions.filter((d) => !d.accepted).map((d) => describeDecision(d, now)))];
  if (res.accepted > 0 && refused.length === 0) return res.accepted === 1 ? "na fila" : `${res.accepted} feeds na fila`;
  return refused.join("; ");
}

export function SyncPage({ me, onSignedOut }: { me: Me; onSignedOut: () => void }) {
  const [feeds, setFeeds] = useState<FeedView[]>([]);
  const [at, setAt] = useState<string>("");
  const [loadError, setLoadError] = useState("");
  const [filters, setFilters] = useState<Filters>({ text: "", uf: "", state: "" });
  const [banner, setBanner] = useState("");
  const [rowMessages, setRowMessages] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const res = await api.feeds();
        if (stopped) return;
        setFeeds(res.feeds);
        setAt(res.at);
        setLoadError("");
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
        setLoadError(`Falha ao atualizar: ${(err as Error).message}`);
      }
      if (!stopped) timer = setTimeout(() => void load(), REFRESH_MS);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);

  const ufs = useMemo(() => [...new Set(feeds.map((f) => f.uf).filter(Boolean))].sort(), [feeds]);
  const shown = feeds.filter((f) => matches(f, filters));
  const now = new Date();

  const syncAll = async () => {
    setBusy(true);
    try {
      const res = await api.syncAll();
      setBanner(`Sincronizar tudo: ${summarizeSync(res.accepted, res.skipped)}.`);
    } catch (err) {
      setBanner(`Sincronizar tudo falhou: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const syncNow = async (ibge: string) => {
    try {
      const res = await api.syncNow(ibge);
      setRowMessages((m) => ({ ...m, [ibge]: outcome(res, new Date()) }));
    } catch (err) {
      setRowMessages((m) => ({ ...m, [ibge]: `falhou: ${(err as Error).message}` }));
    }
  };

  return (
    <section aria-labelledby="sync-title">
      <div class="toolbar">
        <h2 id="sync-title">Sincronização</h2>
        {me.canAct && (
          <button type="button" onClick={() => void syncAll()} disabled={busy}>
            Sincronizar tudo
          </button>
        )}
        <span class="muted" aria-live="polite">
          {at ? `atualizado às ${formatInstant(at, now)}` : ""}
        </span>
      </div>
      <p role="status" class="banner" data-testid="banner">
        {banner}
      </p>
      {loadError && (
        <p role="alert" class="error">
          {loadError}
        </p>
      )}
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filtros">
        <label>
          Buscar (IBGE ou nome)
          <input type="search" value={filters.text} onInput={(e) => setFilters({ ...filters, text: e.currentTarget.value })} />
        </label>
        <label>
          UF
          <select value={filters.uf} onChange={(e) => setFilters({ ...filters, uf: e.currentTarget.value })}>
            <option value="">todas</option>
            {ufs.map((uf) => (
              <option value={uf}>{uf}</option>
            ))}
          </select>
        </label>
        <label>
          Estado
          <select value={filters.state} onChange={(e) => setFilters({ ...filters, state: e.currentTarget.value as FeedStateName | "" })}>
            <option value="">todos</option>
            {(Object.keys(STATE_LABELS) as FeedStateName[]).map((s) => (
              <option value={s}>{STATE_LABELS[s]}</option>
            ))}
          </select>
        </label>
      </form>
      <div class="table-wrap">
        <table class="feeds">
          <caption>
            {shown.length} de {feeds.length} feeds
          </caption>
          <thead>
            <tr>
              <th scope="col">IBGE</th>
              <th scope="col">Município</th>
              <th scope="col">UF</th>
              <th scope="col">Feed</th>
              <th scope="col">Estado</th>
              <th scope="col">NSU</th>
              <th scope="col">Documentos</th>
              <th scope="col">Eventos</th>
              <th scope="col">Quarentena</th>
              <th scope="col">Último sucesso</th>
              <th scope="col">Próxima elegível</th>
              {me.canAct && <th scope="col">Ações</th>}
            </tr>
          </thead>
          <tbody>
            {shown.map((f) => (
              <tr key={`${f.ibge}-${f.ambiente}-${f.tipoNsu}`} data-ibge={f.ibge} data-state={f.state} data-documents={f.documents}>
                <td>{f.ibge}</td>
                <td>{f.name}</td>
                <td>{f.uf}</td>
                <td>
                  {TIPO_LABELS[f.tipoNsu]} · {AMBIENTE_LABELS[f.ambiente]}
                </td>
                <td class={`state state-${f.state}`} title={f.lastError ?? ""}>
                  {describeState(f, now)}
                </td>
                <td class="num">
                  {f.cursor}
                  {f.maxNsu !== "0" && f.maxNsu !== f.cursor ? ` / ${f.maxNsu}` : ""}
                </td>
                <td class="num">{f.documents.toLocaleString("pt-BR")}</td>
                <td class="num">{f.events.toLocaleString("pt-BR")}</td>
                <td class="num">{f.faults.toLocaleString("pt-BR")}</td>
                <td>{f.lastSuccessAt ? formatInstant(f.lastSuccessAt, now) : "—"}</td>
                <td>{f.nextEligibleAt ? formatInstant(f.nextEligibleAt, now) : "—"}</td>
                {me.canAct && (
                  <td>
                    <button type="button" aria-label={`Sincronizar ${f.name || f.ibge}`} onClick={() => void syncNow(f.ibge)}>
                      Sincronizar
                    </button>
                    <span role="status" class="row-message" data-testid={`message-${f.ibge}`}>
                      {rowMessages[f.ibge] ?? ""}
                    </span>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
