// "Cobrança": the queue overview, throughput, the job search, and the routes to a job and to a tenant's
// webhook page. `billingPage` is the app shell's one entry point into these pages.
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Me } from "../api-types.js";
import { formatDuration, JOB_STATE_LABELS, KIND_LABELS } from "../billing-labels.js";
import {
  JOB_KINDS,
  JOB_STATES,
  type BillingAccess,
  type JobKindName,
  type JobsQuery,
  type JobsResponse,
  type JobStateName,
  type OverviewResponse,
} from "../billing-types.js";
import { formatInstant } from "../labels.js";
import { billingApi, jobHref, webhookHref } from "./billing-api.js";
import { BillingJobPage } from "./billing-job.js";
import { usePolling } from "./billing-polling.js";
import { BillingWebhookPage } from "./billing-webhook.js";
import "./billing.css";

const OVERVIEW_REFRESH_MS = 5000;
const HOURS = 24;

/** The page for a /cobranca path, or null for any other path. */
export function billingPage(path: string, me: Me, onSignedOut: () => void): JSX.Element | null {
  if (path === "/cobranca") return <BillingPage onSignedOut={onSignedOut} />;
  const job = /^\/cobranca\/([^/]+)\/(boleto|remessa|retorno)\/([^/]+)$/.exec(path);
  if (job)
    return (
      <BillingJobPage
        me={me}
        tenant={decodeURIComponent(job[1]!)}
        kind={job[2] as JobKindName}
        jobId={decodeURIComponent(job[3]!)}
        onSignedOut={onSignedOut}
      />
    );
  const hook = /^\/cobranca\/([^/]+)\/webhook$/.exec(path);
  if (hook) return <BillingWebhookPage me={me} tenant={decodeURIComponent(hook[1]!)} onSignedOut={onSignedOut} />;
  return null;
}

function QueueOverview({ overview }: { overview: OverviewResponse }) {
  const count = (kind: JobKindName, state: JobStateName) => overview.counts.find((c) => c.kind === kind && c.state === state)?.count ?? 0;
  return (
    <table class="billing-queue" data-testid="queue-overview">
      <caption>Fila por tipo e estado (todos os jobs retidos)</caption>
      <thead>
        <tr>
          <th scope="col">Tipo</th>
          {JOB_STATES.map((s) => (
            <th scope="col">{JOB_STATE_LABELS[s]}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {JOB_KINDS.map((k) => (
          <tr data-kind={k}>
            <th scope="row">{KIND_LABELS[k]}</th>
            {JOB_STATES.map((s) => (
              <td class={`num ${count(k, s) > 0 ? `count-${s}` : "zero"}`} data-state={s}>
                {count(k, s)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Throughput({ overview, now }: { overview: OverviewResponse; now: Date }) {
  const busiest = Math.max(1, ...overview.throughput.map((b) => b.items));
  const recent = overview.throughput.filter((b, i) => b.jobs > 0 || i >= overview.throughput.length - 6);
  return (
    <table class="billing-throughput" data-testid="throughput">
      <caption>
        Vazão e latência nas últimas {overview.hours} h (jobs finalizados por hora; horas sem jobs omitidas, exceto as 6 últimas)
      </caption>
      <thead>
        <tr>
          <th scope="col">Hora</th>
          <th scope="col">Jobs</th>
          <th scope="col">Itens</th>
          <th scope="col">Latência p50</th>
          <th scope="col">Latência p95</th>
          <th scope="col">
            <span class="sr-only">Itens por hora</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {recent.map((b) => (
          <tr>
            <td>{formatInstant(b.hour, now)}</td>
            <td class="num">{b.jobs}</td>
            <td class="num">{b.items}</td>
            <td class="num">{b.latencyP50Ms !== undefined ? formatDuration(b.latencyP50Ms) : "—"}</td>
            <td class="num">{b.latencyP95Ms !== undefined ? formatDuration(b.latencyP95Ms) : "—"}</td>
            <td class="bar-cell" aria-hidden="true">
              <span class="bar" style={{ width: `${Math.round((b.items / busiest) * 100)}%` }} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const EMPTY: JobsQuery = {};

function JobSearch({ access, onSignedOut }: { access: BillingAccess; onSignedOut: () => void }) {
  const [draft, setDraft] = useState<JobsQuery>(EMPTY);
  const [query, setQuery] = useState<JobsQuery>(EMPTY);
  const [result, setResult] = useState<JobsResponse | undefined>();
  const error = usePolling(async () => setResult(await billingApi.jobs(query)), OVERVIEW_REFRESH_MS, onSignedOut, [query]);
  const set = (k: keyof JobsQuery) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value || undefined });
  const now = new Date();
  return (
    <section aria-labelledby="jobs-title">
      <h3 id="jobs-title">Jobs</h3>
      <form
        class="filters billing-filters"
        aria-label="Buscar jobs"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ ...draft });
        }}
      >
        <label>
          Tenant
          <select value={draft.tenant ?? ""} onChange={set("tenant")}>
            <option value="">todos</option>
            {access.tenants.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Tipo
          <select value={draft.kind ?? ""} onChange={set("kind")}>
            <option value="">todos</option>
            {JOB_KINDS.map((k) => (
              <option value={k}>{KIND_LABELS[k]}</option>
            ))}
          </select>
        </label>
        <label>
          Estado
          <select value={draft.state ?? ""} onChange={set("state")}>
            <option value="">todos</option>
            {JOB_STATES.map((s) => (
              <option value={s}>{JOB_STATE_LABELS[s]}</option>
            ))}
          </select>
        </label>
        <label>
          ID do job
          <input value={draft.jobId ?? ""} onInput={set("jobId")} maxLength={64} />
        </label>
        <label>
          Chave de idempotência
          <input value={draft.idempotencyKey ?? ""} onInput={set("idempotencyKey")} maxLength={255} />
        </label>
        <label>
          ID externo (item)
          <input value={draft.externalId ?? ""} onInput={set("externalId")} maxLength={64} />
        </label>
        <label>
          Criado de
          <input type="date" value={draft.from ?? ""} onInput={set("from")} />
        </label>
        <label>
          até
          <input type="date" value={draft.to ?? ""} onInput={set("to")} />
        </label>
        <button type="submit">Buscar</button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {result?.problems.map((p) => (
        <p role="alert" class="error">
          Tenant {p.tenant}: {p.message}
        </p>
      ))}
      <div class="table-wrap">
        <table class="billing-jobs">
          <caption>
            {result
              ? `${result.jobs.length} jobs${result.truncated ? " (os mais recentes; refine a busca para ver outros)" : ""}`
              : "Carregando…"}
          </caption>
          <thead>
            <tr>
              <th scope="col">Criado</th>
              <th scope="col">Tenant</th>
              <th scope="col">Tipo</th>
              <th scope="col">Job</th>
              <th scope="col">Estado</th>
              <th scope="col">Concluídos</th>
              <th scope="col">Falhas</th>
              <th scope="col">Total</th>
              <th scope="col">Chave de idempotência</th>
              <th scope="col">Finalizado</th>
            </tr>
          </thead>
          <tbody>
            {result?.jobs.map((j) => (
              <tr key={`${j.tenant}/${j.jobId}`} data-job={j.jobId} data-state={j.state}>
                <td>{j.createdAt ? formatInstant(j.createdAt, now) : "—"}</td>
                <td>{j.tenant}</td>
                <td>{KIND_LABELS[j.kind]}</td>
                <td>
                  <a href={jobHref(j.tenant, j.kind, j.jobId)}>{j.jobId}</a>
                </td>
                <td class={`job-state job-${j.state}`}>{JOB_STATE_LABELS[j.state]}</td>
                <td class="num">{j.counters.completed}</td>
                <td class="num">{j.counters.failed}</td>
                <td class="num">{j.counters.total}</td>
                <td>{j.idempotencyKey || "—"}</td>
                <td>{j.finishedAt ? formatInstant(j.finishedAt, now) : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function BillingPage({ onSignedOut }: { onSignedOut: () => void }) {
  const [access, setAccess] = useState<BillingAccess | undefined>();
  const [overview, setOverview] = useState<OverviewResponse | undefined>();
  const accessError = usePolling(async () => setAccess(await billingApi.access()), 0, onSignedOut);
  const ready = access?.configured === true && access.tenants.length > 0;
  const overviewError = usePolling(
    async () => {
      if (ready) setOverview(await billingApi.overview(HOURS));
    },
    OVERVIEW_REFRESH_MS,
    onSignedOut,
    [ready],
  );
  const now = new Date();
  return (
    <section aria-labelledby="billing-title">
      <div class="toolbar">
        <h2 id="billing-title">Cobrança</h2>
        <span class="muted" aria-live="polite">
          {overview ? `atualizado às ${formatInstant(overview.at, now)}` : ""}
        </span>
      </div>
      {(accessError || overviewError) && (
        <p role="alert" class="error">
          {accessError || overviewError}
        </p>
      )}
      {access && !access.configured && <p class="notice">A cobrança não está configurada neste painel (CONSOLE_BILLING_TENANTS_FILE).</p>}
      {access?.configured && access.tenants.length === 0 && (
        <p class="notice" data-testid="no-tenants">
          Seu usuário não tem acesso a nenhum tenant de cobrança. Peça a um administrador para incluir tenants=… no arquivo de operadores.
        </p>
      )}
      {ready && (
        <>
          <p class="tenant-links">
            Tenants:{" "}
            {access.tenants.map((t, i) => (
              <>
                {i > 0 && ", "}
                <a href={webhookHref(t)}>{t} (webhooks)</a>
              </>
            ))}
          </p>
          {overview?.problems.map((p) => (
            <p role="alert" class="error">
              Tenant {p.tenant}: {p.message}
            </p>
          ))}
          {overview && (
            <div class="billing-overview">
              <QueueOverview overview={overview} />
              <Throughput overview={overview} now={now} />
            </div>
          )}
          <JobSearch access={access} onSignedOut={onSignedOut} />
        </>
      )}
    </section>
  );
}
