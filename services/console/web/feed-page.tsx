// A feed's page: live status, runs (progress, items, duration, outcome, error), quarantine with the raw XML
// of each item, holes in the NSU sequence and what reconciliation confirmed. Refreshed every few seconds.
import { useEffect, useState } from "preact/hooks";
import type { AmbienteName, FeedPage as FeedPageData, Me, TipoNsuName } from "../api-types.js";
import { describeState, formatInstant } from "../labels.js";
import {
  AMBIENTE_LABELS,
  describeCancel,
  describeProgress,
  FAULT_LABELS,
  formatDuration,
  OUTCOME_LABELS,
  TIPO_LABELS,
  TRIGGER_LABELS,
} from "../labels-nfse.js";
import { api, ApiFailure } from "./api.js";
import { onLinkClick } from "./router.js";

const REFRESH_MS = 2000;
const POOL_LABELS: Record<string, string> = { incremental: "incremental", bootstrap: "carga inicial", reconciliation: "reconciliação" };

export function FeedPage(props: { me: Me; ibge: string; ambiente: AmbienteName; tipoNsu: TipoNsuName; onSignedOut: () => void }) {
  const { me, onSignedOut } = props;
  const key = { ibge: props.ibge, ambiente: props.ambiente, tipoNsu: props.tipoNsu };
  const [data, setData] = useState<FeedPageData | undefined>();
  const [error, setError] = useState("");
  const [message, setMessage] = useState("");

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const res = await api.feed(key);
        if (stopped) return;
        setData(res);
        setError("");
      } catch (err) {
        if (stopped) return;
        if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
        setError(`Falha ao carregar o feed: ${(err as Error).message}`);
      }
      if (!stopped) timer = setTimeout(() => void load(), REFRESH_MS);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [props.ibge, props.ambiente, props.tipoNsu]);

  const now = new Date();
  const f = data?.feed;
  const title = `${f?.name || props.ibge} · ${TIPO_LABELS[props.tipoNsu]} · ${AMBIENTE_LABELS[props.ambiente]}`;
  const reconciliation = data?.runs.filter((r) => r.trigger === "reconciliation") ?? [];
  const cancel = async () => {
    try {
      setMessage(describeCancel(await api.cancel(key)));
    } catch (err) {
      setMessage(`Cancelar falhou: ${(err as Error).message}`);
    }
  };
  const syncNow = async () => {
    try {
      const res = await api.syncNow(props.ibge);
      setMessage(res.accepted > 0 ? "na fila" : `recusado (${res.skipped})`);
    } catch (err) {
      setMessage(`Sincronizar falhou: ${(err as Error).message}`);
    }
  };

  return (
    <section aria-labelledby="feed-title">
      <p>
        <a href="/" onClick={onLinkClick}>
          ← Sincronização
        </a>
      </p>
      <div class="toolbar">
        <h2 id="feed-title">{title}</h2>
        {me.canAct && f && (
          <>
            <button type="button" onClick={() => void syncNow()}>
              Sincronizar
            </button>
            {(f.state === "running" || f.state === "queued") && (
              <button type="button" onClick={() => void cancel()}>
                Cancelar
              </button>
            )}
          </>
        )}
        <span role="status" class="row-message" data-testid="feed-message">
          {message}
        </span>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {f && data && (
        <>
          <dl class="facts" data-testid="feed-facts" data-state={f.state}>
            <dt>Estado</dt>
            <dd class={`state state-${f.state}`}>{describeState(f, now)}</dd>
            <dt>NSU</dt>
            <dd>
              {f.cursor}
              {f.maxNsu !== "0" ? ` de ${f.maxNsu}` : ""}
            </dd>
            <dt>Documentos / eventos</dt>
            <dd>
              {f.documents.toLocaleString("pt-BR")} / {f.events.toLocaleString("pt-BR")}
            </dd>
            <dt>Fila</dt>
            <dd>{POOL_LABELS[data.pool] ?? "—"}</dd>
            <dt>Último sucesso</dt>
            <dd>{f.lastSuccessAt ? formatInstant(f.lastSuccessAt, now) : "—"}</dd>
            <dt>Último erro</dt>
            <dd>{f.lastError ? `${f.lastErrorAt ? formatInstant(f.lastErrorAt, now) : ""} ${f.lastError}` : "—"}</dd>
            <dt>Certificado</dt>
            <dd>{f.hasActiveCertificate ? "ativo" : "ausente"}</dd>
          </dl>

          <h3 id="runs-title">Execuções</h3>
          <div class="table-wrap">
            <table class="feeds" aria-labelledby="runs-title" data-testid="runs">
              <thead>
                <tr>
                  <th scope="col">Início</th>
                  <th scope="col">Origem</th>
                  <th scope="col">Progresso</th>
                  <th scope="col">Lotes</th>
                  <th scope="col">Documentos</th>
                  <th scope="col">Eventos</th>
                  <th scope="col">Quarentena</th>
                  <th scope="col">Duração</th>
                  <th scope="col">Resultado</th>
                  <th scope="col">Erro</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((r) => (
                  <tr key={r.runId} data-outcome={r.outcome}>
                    <td>{r.startedAt ? formatInstant(r.startedAt, now) : "—"}</td>
                    <td>{TRIGGER_LABELS[r.trigger]}</td>
                    <td>{describeProgress(r)}</td>
                    <td class="num">{r.batches}</td>
                    <td class="num">{r.documents.toLocaleString("pt-BR")}</td>
                    <td class="num">{r.events.toLocaleString("pt-BR")}</td>
                    <td class="num">{r.faults.toLocaleString("pt-BR")}</td>
                    <td>{formatDuration(r.startedAt, r.finishedAt, now)}</td>
                    <td>
                      {OUTCOME_LABELS[r.outcome]}
                      {r.cancelRequestedBy ? ` (cancelamento pedido por ${r.cancelRequestedBy})` : ""}
                    </td>
                    <td class="wrap">{r.error ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.runs.length === 0 && <p class="muted">Nenhuma execução registrada.</p>}
          {data.moreRuns && <p class="muted">Mostrando as {data.runs.length} execuções mais recentes.</p>}

          <h3 id="quarantine-title">Quarentena</h3>
          {data.quarantine.length === 0 ? (
            <p class="muted">Nenhum item em quarentena.</p>
          ) : (
            <div class="table-wrap">
              <table class="feeds" aria-labelledby="quarantine-title" data-testid="quarantine">
                <thead>
                  <tr>
                    <th scope="col">NSU</th>
                    <th scope="col">Motivo</th>
                    <th scope="col">Detalhe</th>
                    <th scope="col">Chave</th>
                    <th scope="col">Em quarentena desde</th>
                    <th scope="col">Arquivo</th>
                  </tr>
                </thead>
                <tbody>
                  {data.quarantine.map((q) => (
                    <tr key={q.id} data-nsu={q.nsu}>
                      <td class="num">{q.nsu}</td>
                      <td>{FAULT_LABELS[q.reason] ?? q.reason}</td>
                      <td class="wrap">{q.message}</td>
                      <td class="wrap mono">{q.chave ?? "—"}</td>
                      <td>{q.quarantinedAt ? formatInstant(q.quarantinedAt, now) : "—"}</td>
                      <td>
                        <a href={api.quarantineUrl(key, q.nsu, q.id)} download aria-label={`Baixar o XML do NSU ${q.nsu}`}>
                          Baixar XML
                        </a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {data.moreQuarantine && <p class="muted">Mostrando os {data.quarantine.length} primeiros itens.</p>}

          <h3>Lacunas e reconciliação</h3>
          <p data-testid="gaps">
            {data.gaps.length === 0
              ? "Nenhuma lacuna na sequência de NSU armazenada."
              : `${data.missingNsus} NSU ausentes${data.gapsTruncated ? " (ao menos)" : ""}: ${data.gaps
                  .map((g) => (g.start === g.end ? g.start : `${g.start}–${g.end}`))
                  .join(", ")}`}
          </p>
          <p class="muted">
            {data.confirmedHoles} NSU confirmados vazios pelo ADN (reconciliação);{" "}
            {reconciliation.length === 0
              ? "nenhuma execução de reconciliação recente."
              : `última reconciliação: ${reconciliation[0]!.startedAt ? formatInstant(reconciliation[0]!.startedAt, now) : "—"}, ${OUTCOME_LABELS[reconciliation[0]!.outcome]}.`}
          </p>
        </>
      )}
    </section>
  );
}
