// One billing job: its state and counters, items with their attempts and errors (or the remessa's sub-batches,
// or the retorno's summary), "Reprocessar falhas", and signed download links on request.
import { useState } from "preact/hooks";
import type { Me } from "../api-types.js";
import {
  describeError,
  describeRetry,
  formatBytes,
  formatDuration,
  ITEM_STATE_LABELS,
  JOB_STATE_LABELS,
  KIND_LABELS,
  SUBLOTE_STATE_LABELS,
} from "../billing-labels.js";
import type { DownloadsResponse, ItemView, JobDetail, JobKindName } from "../billing-types.js";
import { formatInstant } from "../labels.js";
import { billingApi, webhookHref } from "./billing-api.js";
import { usePolling } from "./billing-polling.js";

const REFRESH_MS = 2000;
const FINAL = ["completed", "partially_completed", "failed"];

function Attempts({ item, now }: { item: ItemView; now: Date }) {
  if (!item.attempts || item.attempts.length === 0) return null;
  return (
    <ol class="attempts" aria-label={`Tentativas de ${item.itemId}`}>
      {item.attempts.map((a) => (
        <li>
          Tentativa {a.number}: {ITEM_STATE_LABELS[a.state]}
          {a.finishedAt ? ` às ${formatInstant(a.finishedAt, now)}` : ""}
          {a.errors.length > 0 ? ` — ${a.errors.map(describeError).join("; ")}` : ""}
        </li>
      ))}
    </ol>
  );
}

function Downloads({ downloads }: { downloads: DownloadsResponse }) {
  if (downloads.links.length === 0) return <p class="muted">Nenhum arquivo disponível.</p>;
  return (
    <ul class="downloads" data-testid="downloads">
      {downloads.links.map((l) => (
        <li>
          <a href={l.url} download={l.name.split("/").pop()} rel="noreferrer">
            {l.name}
          </a>{" "}
          <span class="muted">
            {formatBytes(l.sizeBytes)} · sha256 {l.sha256.slice(0, 12)}…
            {l.linkExpiresAt ? ` · link válido até ${formatInstant(l.linkExpiresAt, new Date())}` : ""}
          </span>
        </li>
      ))}
    </ul>
  );
}

export function BillingJobPage(props: { me: Me; tenant: string; kind: JobKindName; jobId: string; onSignedOut: () => void }) {
  const { me, tenant, kind, jobId, onSignedOut } = props;
  const [job, setJob] = useState<JobDetail | undefined>();
  const [banner, setBanner] = useState("");
  const [busy, setBusy] = useState(false);
  const [downloads, setDownloads] = useState<DownloadsResponse | undefined>();
  const [notFound, setNotFound] = useState(false);
  const error = usePolling(
    async () => {
      try {
        setJob(await billingApi.job(tenant, kind, jobId));
      } catch (err) {
        if ((err as { status?: number }).status === 404) setNotFound(true);
        else throw err;
      }
    },
    REFRESH_MS,
    onSignedOut,
  );
  const now = new Date();
  const retry = async () => {
    setBusy(true);
    try {
      const r = await billingApi.retry(tenant, kind, jobId);
      setBanner(`Reprocessar falhas: ${describeRetry(r, kind === "remessa" ? "sublote" : "item")}`);
      setDownloads(undefined);
      setJob(await billingApi.job(tenant, kind, jobId));
    } catch (err) {
      setBanner(`Reprocessar falhas falhou: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const loadDownloads = async () => {
    try {
      setDownloads(await billingApi.downloads(tenant, kind, jobId));
    } catch (err) {
      setBanner(`Downloads: ${(err as Error).message}`);
    }
  };
  if (notFound)
    return (
      <section>
        <h2>Job não encontrado</h2>
        <p>
          Nenhum job {jobId} de {KIND_LABELS[kind]} no tenant {tenant} que você possa ver. <a href="/cobranca">Voltar à Cobrança</a>
        </p>
      </section>
    );
  const finished = job ? FINAL.includes(job.state) : false;
  return (
    <section aria-labelledby="job-title">
      <p>
        <a href="/cobranca">← Cobrança</a> · <a href={webhookHref(tenant)}>webhooks de {tenant}</a>
      </p>
      <div class="toolbar">
        <h2 id="job-title">
          {KIND_LABELS[kind]} · {jobId}
        </h2>
        {job && (
          <span class={`job-state job-${job.state}`} data-testid="job-state" data-state={job.state}>
            {JOB_STATE_LABELS[job.state]}
          </span>
        )}
        {me.canAct && job && kind !== "retorno" && (
          <button type="button" onClick={() => void retry()} disabled={busy || job.retryable === 0}>
            Reprocessar falhas
          </button>
        )}
        {job && kind !== "retorno" && (
          <button type="button" class="secondary" onClick={() => void loadDownloads()} disabled={!finished}>
            Links de download
          </button>
        )}
      </div>
      <p role="status" class="banner" data-testid="banner">
        {banner}
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {job && (
        <>
          <dl class="job-facts">
            <dt>Tenant</dt>
            <dd>{job.tenant}</dd>
            <dt>Ambiente</dt>
            <dd>{job.environment === "sandbox" ? "homologação (sandbox)" : "produção"}</dd>
            <dt>Itens</dt>
            <dd data-testid="counters">
              {job.counters.completed} concluídos, {job.counters.failed} com falha, {job.counters.skipped} ignorados,{" "}
              {job.counters.pending + job.counters.inProgress} em andamento — {job.counters.total} no total
            </dd>
            <dt>Chave de idempotência</dt>
            <dd>{job.idempotencyKey || "—"}</dd>
            <dt>Pedido por</dt>
            <dd>{job.requestedBy || "—"}</dd>
            <dt>Criado</dt>
            <dd>{job.createdAt ? formatInstant(job.createdAt, now) : "—"}</dd>
            <dt>Finalizado</dt>
            <dd>{job.finishedAt ? formatInstant(job.finishedAt, now) : "—"}</dd>
            <dt>Duração</dt>
            <dd>{job.durationMs !== undefined ? formatDuration(job.durationMs) : "—"}</dd>
            <dt>Rodadas de reprocessamento</dt>
            <dd>{job.retryRounds}</dd>
            <dt>Falhas reprocessáveis</dt>
            <dd data-testid="retryable">{job.retryable}</dd>
          </dl>
          {downloads && <Downloads downloads={downloads} />}
          {kind === "boleto" && (
            <div class="table-wrap">
              <table class="billing-items">
                <caption>Itens{job.itemsTruncated ? ` (os primeiros ${job.items.length})` : ""}</caption>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">ID</th>
                    <th scope="col">Estado</th>
                    <th scope="col">Tentativas</th>
                    <th scope="col">Nosso número</th>
                    <th scope="col">Erros e tentativas</th>
                  </tr>
                </thead>
                <tbody>
                  {job.items.map((i) => (
                    <tr key={i.itemId} data-item={i.itemId} data-state={i.state}>
                      <td class="num">{i.position}</td>
                      <td>{i.itemId}</td>
                      <td class={`item-${i.state}`}>{ITEM_STATE_LABELS[i.state]}</td>
                      <td class="num">{i.attemptCount}</td>
                      <td>{i.nossoNumero ?? "—"}</td>
                      <td>
                        {i.errors.map((e) => (
                          <div class="item-error">{describeError(e)}</div>
                        ))}
                        <Attempts item={i} now={now} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {job.sublotes && (
            <table class="billing-items">
              <caption>Sublotes</caption>
              <thead>
                <tr>
                  <th scope="col">Sublote</th>
                  <th scope="col">Banco</th>
                  <th scope="col">Convênio</th>
                  <th scope="col">Carteira</th>
                  <th scope="col">Títulos</th>
                  <th scope="col">Estado</th>
                  <th scope="col">Tentativas</th>
                  <th scope="col">Arquivo</th>
                  <th scope="col">Erros</th>
                </tr>
              </thead>
              <tbody>
                {job.sublotes.map((s) => (
                  <tr data-state={s.state}>
                    <td>{s.subloteId}</td>
                    <td>{s.banco}</td>
                    <td>{s.convenio}</td>
                    <td>{s.carteira}</td>
                    <td class="num">{s.titulos}</td>
                    <td>{SUBLOTE_STATE_LABELS[s.state]}</td>
                    <td class="num">{s.attemptCount}</td>
                    <td>{s.fileName ?? "—"}</td>
                    <td>{s.errors.map(describeError).join("; ") || "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {job.retorno && (
            <>
              <p>
                Arquivo {job.retorno.fileName || "(sem nome)"} do banco {job.retorno.banco}: {job.retorno.occurrences} ocorrências,{" "}
                {job.retorno.duplicates} já recebidas antes.
              </p>
              <table class="billing-items">
                <caption>Ocorrências por estado</caption>
                <tbody>
                  {job.retorno.summary.map((s) => (
                    <tr>
                      <th scope="row">{s.state}</th>
                      <td class="num">{s.count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {job.retorno.issues.length > 0 && (
                <ul>
                  {job.retorno.issues.map((i) => (
                    <li>
                      linha {i.lineNumber} ({i.severity}): {i.code} — {i.message}
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
    </section>
  );
}
