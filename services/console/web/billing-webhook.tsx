// A tenant's completion webhook: the endpoint (never its secret), the delivery log with a state filter, and
// "Reenviar" for a delivery that gave up (dead letter) or must be sent again.
import { useState } from "preact/hooks";
import type { Me } from "../api-types.js";
import { DELIVERY_STATE_LABELS } from "../billing-labels.js";
import { DELIVERY_STATES, type DeliveryStateName, type WebhookResponse } from "../billing-types.js";
import { formatInstant } from "../labels.js";
import { billingApi, jobHref } from "./billing-api.js";
import { usePolling } from "./billing-polling.js";

const REFRESH_MS = 5000;
/** Deliveries still being tried need no push. */
const CAN_REDELIVER: readonly DeliveryStateName[] = ["dead_lettered", "succeeded", "skipped"];

export function BillingWebhookPage({ me, tenant, onSignedOut }: { me: Me; tenant: string; onSignedOut: () => void }) {
  const [state, setState] = useState<DeliveryStateName | "">("");
  const [data, setData] = useState<WebhookResponse | undefined>();
  const [messages, setMessages] = useState<Record<string, string>>({});
  const error = usePolling(async () => setData(await billingApi.webhook(tenant, state)), REFRESH_MS, onSignedOut, [state]);
  const now = new Date();
  const redeliver = async (id: string) => {
    try {
      const d = await billingApi.redeliver(tenant, id);
      setMessages((m) => ({ ...m, [id]: `reenviada: ${DELIVERY_STATE_LABELS[d.state]}` }));
      setData(await billingApi.webhook(tenant, state));
    } catch (err) {
      setMessages((m) => ({ ...m, [id]: `falhou: ${(err as Error).message}` }));
    }
  };
  return (
    <section aria-labelledby="webhook-title">
      <p>
        <a href="/cobranca">← Cobrança</a>
      </p>
      <h2 id="webhook-title">Webhooks · {tenant}</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {data &&
        (data.endpoint ? (
          <dl class="job-facts" data-testid="endpoint">
            <dt>Endpoint</dt>
            <dd>{data.endpoint.url}</dd>
            <dt>Ativo</dt>
            <dd>{data.endpoint.enabled ? "sim" : "não"}</dd>
            <dt>Eventos</dt>
            <dd>{data.endpoint.eventTypes.length ? data.endpoint.eventTypes.join(", ") : "todos"}</dd>
            <dt>Segredo</dt>
            <dd>…{data.endpoint.secretHint}</dd>
            <dt>Atualizado</dt>
            <dd>{data.endpoint.updatedAt ? formatInstant(data.endpoint.updatedAt, now) : "—"}</dd>
          </dl>
        ) : (
          <p class="notice">Nenhum endpoint configurado para este tenant: os eventos ficam registrados como não enviados.</p>
        ))}
      <form class="filters" aria-label="Filtrar entregas" onSubmit={(e) => e.preventDefault()}>
        <label>
          Estado da entrega
          <select value={state} onChange={(e) => setState(e.currentTarget.value as DeliveryStateName | "")}>
            <option value="">todos</option>
            {DELIVERY_STATES.map((s) => (
              <option value={s}>{DELIVERY_STATE_LABELS[s]}</option>
            ))}
          </select>
        </label>
      </form>
      <div class="table-wrap">
        <table class="billing-items">
          <caption>{data ? `${data.deliveries.length} entregas (as mais recentes primeiro)` : "Carregando…"}</caption>
          <thead>
            <tr>
              <th scope="col">Criada</th>
              <th scope="col">Evento</th>
              <th scope="col">Job</th>
              <th scope="col">Estado</th>
              <th scope="col">Tentativas</th>
              <th scope="col">Último HTTP</th>
              <th scope="col">Último erro</th>
              <th scope="col">Próxima tentativa</th>
              {me.canAct && <th scope="col">Ações</th>}
            </tr>
          </thead>
          <tbody>
            {data?.deliveries.map((d) => (
              <tr key={d.deliveryId} data-delivery={d.deliveryId} data-state={d.state}>
                <td>{d.createdAt ? formatInstant(d.createdAt, now) : "—"}</td>
                <td>{d.eventType}</td>
                <td>
                  <a href={jobHref(tenant, d.jobKind, d.jobId)}>{d.jobId}</a>
                </td>
                <td>{DELIVERY_STATE_LABELS[d.state]}</td>
                <td class="num">{d.attempts}</td>
                <td class="num">{d.lastHttpStatus || "—"}</td>
                <td>{d.lastError || "—"}</td>
                <td>{d.nextAttemptAt && (d.state === "pending" || d.state === "retrying") ? formatInstant(d.nextAttemptAt, now) : "—"}</td>
                {me.canAct && (
                  <td>
                    {CAN_REDELIVER.includes(d.state) && (
                      <button type="button" aria-label={`Reenviar ${d.deliveryId}`} onClick={() => void redeliver(d.deliveryId)}>
                        Reenviar
                      </button>
                    )}
                    <span role="status" class="row-message">
                      {messages[d.deliveryId] ?? ""}
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
