// "Sincronização": one page of feeds with its filters applied by the server, refreshed every few seconds,
// and the sync and Cancelar buttons.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { FeedStateName, FeedsPage, FeedView, Me, MunicipioView, SyncResponse } from "../api-types.js";
import { describeDecision, describeState, formatInstant, STATE_LABELS, summarizeSync } from "../labels.js";
import {
  AMBIENTE_LABELS,
  daysToExpiry,
  describeCancel,
  describeExpiry,
  EXPIRY_WARNING_DAYS,
  feedPath,
  TIPO_LABELS,
} from "../labels-nfse.js";
import { api, ApiFailure } from "./api.js";
import { onLinkClick } from "./router.js";

const REFRESH_MS = 2000;
const TYPING_MS = 250;

interface Filters {
  text: string;
  uf: string;
  state: FeedStateName | "";
}

/** A refusal's reasons, one per refused feed, or the accepted count. */
function outcome(res: SyncResponse, now: Date): string {
  const refused = [...new Set(res.decisions.filter((d) => !d.accepted).map((d) => describeDecision(d, now)))];
  if (res.accepted > 0 && refused.length === 0) return res.accepted === 1 ? "na fila" : `${res.accepted} feeds na fila`;
  return refused.join("; ");
}

/**
 * The unfiltered first page, asked for as soon as the app's script runs, alongside "who am I": the page's
 * first paint does not wait for one round trip after the other. Used once; a 401 simply leaves it unused.
 */
let prefetched: Promise<FeedsPage | undefined> | undefined = location.pathname === "/" ? api.feeds({}).catch(() => undefined) : undefined;
const takePrefetched = () => {
  const p = prefetched;
  prefetched = undefined;
  return p;
};

const rowKey = (f: FeedView) => `${f.ibge}-${f.ambiente}-${f.tipoNsu}`;
const cancellable = (f: FeedView) => f.state === "running" || f.state === "queued";

export function SyncPage({ me, onSignedOut }: { me: Me; onSignedOut: () => void }) {
  const [feeds, setFeeds] = useState<FeedView[]>([]);
  const [at, setAt] = useState<string>("");
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState("");
  const [filters, setFilters] = useState<Filters>({ text: "", uf: "", state: "" });
  const [applied, setApplied] = useState<Filters>(filters);
  const [pages, setPages] = useState<string[]>([""]);
  const [nextPageToken, setNextPageToken] = useState<string | undefined>();
  const [municipios, setMunicipios] = useState<MunicipioView[]>([]);
  const [banner, setBanner] = useState("");
  const [rowMessages, setRowMessages] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const generation = useRef(0);

  // Typing waits a moment before it asks the server; the selects apply at once.
  useEffect(() => {
    const t = setTimeout(() => setApplied(filters), filters.text === applied.text ? 0 : TYPING_MS);
    return () => clearTimeout(t);
  }, [filters]);
  useEffect(() => setPages([""]), [applied]);
  useEffect(() => {
    api.municipios().then(
      (r) => setMunicipios(r.municipios),
      () => undefined,
    );
  }, []);

  const pageToken = pages[pages.length - 1]!;
  useEffect(() => {
    const mine = ++generation.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unfiltered = applied.text.trim() === "" && applied.uf === "" && applied.state === "" && pageToken === "";
    let first = unfiltered ? takePrefetched() : undefined;
    const load = async () => {
      try {
        const early = first && (await first);
        first = undefined;
        const res = early ?? (await api.feeds({ q: applied.text.trim(), uf: applied.uf, state: applied.state, pageToken }));
        if (mine !== generation.current) return;
        setFeeds(res.feeds);
        setNextPageToken(res.nextPageToken);
        setAt(res.at);
        setLoaded(true);
        setLoadError("");
      } catch (err) {
        if (mine !== generation.current) return;
        if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
        setLoadError(`Falha ao atualizar: ${(err as Error).message}`);
      }
      if (mine === generation.current) timer = setTimeout(() => void load(), REFRESH_MS);
    };
    void load();
    return () => {
      generation.current++;
      clearTimeout(timer);
    };
  }, [applied, pageToken]);

  // Benchmarks read this mark: the first time the table shows data (bench/console.ts).
  useEffect(() => {
    if (loaded) performance.mark("malha:feeds-rendered");
  }, [loaded]);

  const ufs = useMemo(() => [...new Set(municipios.map((m) => m.uf).filter(Boolean))].sort(), [municipios]);
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
  const cancel = async (f: FeedView) => {
    try {
      const res = await api.cancel(f);
      setRowMessages((m) => ({ ...m, [f.ibge]: describeCancel(res) }));
    } catch (err) {
      setRowMessages((m) => ({ ...m, [f.ibge]: `Cancelar falhou: ${(err as Error).message}` }));
    }
  };

  const filtered = applied.text.trim() !== "" || applied.uf !== "" || applied.state !== "";
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
        <table class="feeds" data-loaded={loaded ? "yes" : "no"}>
          <caption data-testid="feeds-caption">
            {feeds.length} {feeds.length === 1 ? "feed" : "feeds"}
            {filtered ? " (filtrados)" : ""}
            {pages.length > 1 || nextPageToken ? ` · página ${pages.length}` : ""}
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
              <th scope="col">Certificado</th>
              {me.canAct && <th scope="col">Ações</th>}
            </tr>
          </thead>
          <tbody>
            {feeds.map((f) => (
              <tr key={rowKey(f)} data-ibge={f.ibge} data-state={f.state} data-documents={f.documents}>
                <td>{f.ibge}</td>
                <td>
                  <a href={feedPath(f)} onClick={onLinkClick}>
                    {f.name || f.ibge}
                  </a>
                </td>
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
                <td class={certificateWarning(f, now) ? "state-error" : ""}>
                  {f.hasActiveCertificate ? "ativo" : "ausente"}
                  {f.certificateNotAfter ? ` · ${describeExpiry(f.certificateNotAfter, now)}` : ""}
                </td>
                {me.canAct && (
                  <td>
                    <button type="button" aria-label={`Sincronizar ${f.name || f.ibge}`} onClick={() => void syncNow(f.ibge)}>
                      Sincronizar
                    </button>
                    {cancellable(f) && (
                      <button type="button" aria-label={`Cancelar ${f.name || f.ibge}`} onClick={() => void cancel(f)}>
                        Cancelar
                      </button>
                    )}
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
      {(pages.length > 1 || nextPageToken) && (
        <nav class="pager" aria-label="Páginas da lista">
          <button type="button" disabled={pages.length === 1} onClick={() => setPages((p) => p.slice(0, -1))}>
            Página anterior
          </button>
          <button type="button" disabled={!nextPageToken} onClick={() => nextPageToken && setPages((p) => [...p, nextPageToken])}>
            Próxima página
          </button>
        </nav>
      )}
    </section>
  );
}

/** No active certificate, or one that expires within the warning window: the feed stops when it does. */
const certificateWarning = (f: FeedView, now: Date): boolean =>
  !f.hasActiveCertificate || (f.certificateNotAfter !== undefined && daysToExpiry(f.certificateNotAfter, now) < EXPIRY_WARNING_DAYS);
