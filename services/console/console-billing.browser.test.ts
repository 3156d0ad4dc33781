// The Cobrança pages in a real browser (Debian's chromium) against real billing and artifacts processes:
// a boleto job whose items failed transiently (artifacts unreachable, as in services/billing/retry.test.ts)
// is retried from the console and completes; a read-only operator sees no buttons and the API refuses it;
// an operator scoped to one tenant neither sees nor reaches another tenant's job.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Environment, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { launchChromium } from "../../test/support/browser.js";
import { buildConsoleApp, writeUsersFile } from "../../test/support/console-app.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { boletoValido } from "../billing/testing/fixtures.js";
import { startReceiver, type Receiver } from "../billing/testing/webhook-receiver.js";

const OPERATOR = { user: "ana", role: "operator" as const, token: "token-da-ana-0123456789", tenants: ["acme"] };
const READER = { user: "leo", role: "read-only" as const, token: "token-do-leo-0123456789", tenants: ["acme"] };

let dir: string;
let mesh: BillingMesh;
let receiver: Receiver;
let consoleProc: ServiceProcess;
let browser: Browser;
let url: string;
let failedJob: string;
let otherTenantJob: string;
let brokenGone: Promise<void>;
let healthyUrl: string;

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${mesh.logTail(20)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "malha-console-billing-"));
  const appDir = join(dir, "app");
  writeUsersFile(join(dir, "users"), [OPERATOR, READER]);
  writeFileSync(join(dir, "tenants"), "acme\nbeta\n");
  receiver = await startReceiver(() => 500);
  // The healthy billing process and the broken one start side by side while Vite builds the app.
  let healthyProc!: ServiceProcess;
  let broken!: ServiceProcess;
  const meshReady = startBillingMesh({
    processes: 0,
    // One delivery attempt: a failed completion webhook is a dead letter at once, ready for "Reenviar".
    billingEnv: { BILLING_WEBHOOK_MAX_ATTEMPTS: "1", BILLING_WEBHOOK_ALLOW_HTTP: "true" },
  }).then(async (m) => {
    mesh = m;
    [healthyProc, broken] = await Promise.all([
      // A shorter ack wait makes its reconciler notice the stalled job sooner (after max(ack wait, 1 s)).
      m.startBilling({ BILLING_ACK_WAIT_SECONDS: "3" }),
      // Cannot reach artifacts, on queues of its own: every item exhausts its deliveries and fails
      // (retryable). Once it is gone, the healthy process's reconciler finishes the job as FAILED.
      m.startBilling({
        BILLING_NATS_PREFIX: `${m.prefix}f`,
        ARTIFACTS_URL: "http://127.0.0.1:1",
        BILLING_MAX_DELIVER: "2",
        BILLING_ACK_WAIT_SECONDS: "1",
      }),
    ]);
  });
  await Promise.all([meshReady, buildConsoleApp(appDir)]);
  healthyUrl = healthyProc.baseUrl;
  const healthy = mesh.billingClient(healthyProc);
  await healthy.setWebhookEndpoint({ tenant: "acme", url: receiver.url, enabled: true });
  otherTenantJob = (await healthy.createBoletoJob({ tenant: "beta", environment: Environment.SANDBOX, items: [boletoValido(9)] })).job!
    .jobId;

  const b = mesh.billingClient(broken);
  const items = [1, 2, 3].map((n) => boletoValido(n, { externalId: `fatura-${n}` }));
  failedJob = (await b.createBoletoJob({ tenant: "acme", idempotencyKey: "lote-dezembro", environment: Environment.SANDBOX, items })).job!
    .jobId;
  // While the items fail, the console and the browser start; the first test waits for the broken process to go.
  brokenGone = until(
    () => b.getBoletoJob({ tenant: "acme", jobId: failedJob }),
    (r) => r.job?.counters?.failed === 3,
    "the items to fail",
  ).then(async () => {
    broken.kill("SIGKILL");
    await broken.exited;
  });
  brokenGone.catch(() => undefined);
  [consoleProc, browser] = await Promise.all([
    startService("console", {
      BILLING_URL: healthyUrl,
      // The sync side is not under test here: nothing listens there.
      COORDINATOR_URL: "http://127.0.0.1:1",
      STORE_URL: "http://127.0.0.1:1",
      CONSOLE_USERS_FILE: join(dir, "users"),
      CONSOLE_BILLING_TENANTS_FILE: join(dir, "tenants"),
      CONSOLE_SESSION_SECRET: "test-only-session-secret-0123456789abcdef",
      CONSOLE_STATIC_DIR: appDir,
      CONSOLE_HTTP_HOST: "127.0.0.1",
      CONSOLE_HTTP_PORT: "0",
    }),
    launchChromium(),
  ]);
  const listening = consoleProc.lines.find((l) => l.includes('"msg":"console listening"'));
  url = `http://127.0.0.1:${(JSON.parse(listening!) as { httpPort: number }).httpPort}`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  consoleProc?.kill("SIGKILL");
  await receiver?.close();
  await mesh?.stop();
  // The screenshots stay: they are the test's artifacts (their paths are logged).
  rmSync(join(dir, "app"), { recursive: true, force: true });
  rmSync(join(dir, "users"), { force: true });
  rmSync(join(dir, "tenants"), { force: true });
});

async function signIn(who: { user: string; token: string }, path: string): Promise<Page> {
  const context = await browser.newContext({ locale: "pt-BR", timezoneId: "America/Sao_Paulo", viewport: { width: 1400, height: 800 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel("Usuário").fill(who.user);
  await page.getByLabel("Token").fill(who.token);
  await page.keyboard.press("Enter");
  await page.getByTestId("who").waitFor();
  await page.goto(`${url}${path}`);
  return page;
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`console screenshot: ${path}`);
}

const jobPath = () => `/cobranca/acme/boleto/${failedJob}`;

describe("console: Cobrança in a browser", () => {
  it("shows the queue by kind and state and the operator's tenant's jobs only, searchable by external id", async () => {
    await brokenGone;
    const page = await signIn(OPERATOR, "/cobranca");
    await page.getByRole("heading", { name: "Cobrança" }).waitFor();
    // The healthy reconciler finishes the stalled job: the overview counts it as failed.
    await expect
      .poll(() => page.locator('[data-kind="boleto"] [data-state="failed"]').textContent(), { timeout: 45_000, interval: 300 })
      .toBe("1");
    const jobs = page.locator("tbody tr[data-job]");
    await expect.poll(() => jobs.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-job")))).toEqual([failedJob]);
    await page.getByLabel("ID externo (item)").fill("fatura-2");
    await page.getByRole("button", { name: "Buscar" }).click();
    await page.getByText("1 jobs").waitFor();
    await page.getByLabel("ID externo (item)").fill("nao-existe");
    await page.getByRole("button", { name: "Buscar" }).click();
    await page.getByText("0 jobs").waitFor();
    await page.getByLabel("ID externo (item)").fill("");
    await page.getByLabel("Chave de idempotência").fill("lote-dezembro");
    await page.getByRole("button", { name: "Buscar" }).click();
    await page.getByText("1 jobs").waitFor();
    await screenshot(page, "cobranca-visao-geral");
  });

  it("retries the failed items from the job page and the job completes, with every attempt kept", async () => {
    const page = await signIn(OPERATOR, jobPath());
    await expect.poll(() => page.getByTestId("job-state").getAttribute("data-state"), { timeout: 45_000, interval: 300 }).toBe("failed");
    expect(await page.getByTestId("retryable").textContent()).toBe("3");
    expect(await page.locator('tr[data-item="fatura-1"]').textContent()).toContain("TENTATIVAS_ESGOTADAS");
    await screenshot(page, "cobranca-job-falhou");
    await page.getByRole("button", { name: "Reprocessar falhas" }).click();
    await expect.poll(() => page.getByTestId("banner").textContent()).toMatch(/^Reprocessar falhas: 3 itens reenfileirados/);
    await expect.poll(() => page.getByTestId("job-state").getAttribute("data-state"), { timeout: 45_000, interval: 300 }).toBe("completed");
    await expect.poll(() => page.getByTestId("counters").textContent()).toMatch(/^3 concluídos, 0 com falha/);
    const attempts = await page.getByRole("list", { name: "Tentativas de fatura-1" }).textContent();
    expect(attempts).toMatch(/Tentativa 1: falhou.*TENTATIVAS_ESGOTADAS.*Tentativa 2: concluído/);
    await page.getByRole("button", { name: "Links de download" }).click();
    const links = page.getByTestId("downloads").locator("a");
    await expect.poll(() => links.allTextContents()).toContain(`rounds/1/boletos-${failedJob}.zip`);
    // A signed link works as given: the zip downloads straight from artifacts.
    const zip = await fetch((await links.first().getAttribute("href"))!);
    expect([zip.status, (await zip.arrayBuffer()).byteLength > 0]).toEqual([200, true]);
    await screenshot(page, "cobranca-job-concluido");
    expect(consoleProc.lines.join("\n")).toMatch(/"actor":"ana","action":"billing-retry","tenant":"acme","kind":"boleto"/);
  });

  it("shows the tenant's webhook deliveries and sends a dead letter again", async () => {
    const page = await signIn(OPERATOR, "/cobranca/acme/webhook");
    await page.getByTestId("endpoint").waitFor();
    const dead = page.locator('tr[data-state="dead_lettered"]');
    await expect.poll(() => dead.count(), { timeout: 30_000, interval: 300 }).toBeGreaterThan(0);
    const before = receiver.received.length;
    await dead
      .first()
      .getByRole("button", { name: /^Reenviar/ })
      .click();
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThan(before);
    await screenshot(page, "cobranca-webhooks");
  });

  it("keeps an operator to its tenants: another tenant's job is 404 through the console API and absent from lists", async () => {
    const page = await signIn(OPERATOR, `/cobranca/beta/boleto/${otherTenantJob}`);
    await page.getByRole("heading", { name: "Job não encontrado" }).waitFor();
    const status = (path: string, method = "GET") =>
      page.evaluate(async ([p, m]) => (await fetch(p!, { method: m!, headers: { "x-malha-console": "1" } })).status, [
        path,
        method,
      ] as const);
    expect(await status(`/api/billing/tenants/beta/jobs/boleto/${otherTenantJob}`)).toBe(404);
    expect(await status(`/api/billing/tenants/beta/jobs/boleto/${otherTenantJob}/retry`, "POST")).toBe(404);
    expect(await status("/api/billing/jobs?tenant=beta")).toBe(404);
    // The same id asked for under the operator's own tenant is not found either.
    expect(await status(`/api/billing/tenants/acme/jobs/boleto/${otherTenantJob}`)).toBe(404);
    const all = await page.evaluate(async () => (await (await fetch("/api/billing/jobs")).json()) as { jobs: { jobId: string }[] });
    expect(all.jobs.map((j) => j.jobId)).toEqual([failedJob]);
    // Billing itself still has it: the console refused, not billing.
    const billing = mesh.billingClient(mesh.billing.find((p) => p.baseUrl === healthyUrl));
    expect((await billing.getBoletoJob({ tenant: "beta", jobId: otherTenantJob })).job?.state).not.toBe(JobState.UNSPECIFIED);
  });

  it("a read-only operator sees the job and the deliveries but no buttons, and the API refuses its retry with 403", async () => {
    const page = await signIn(READER, jobPath());
    await expect.poll(() => page.getByTestId("job-state").getAttribute("data-state"), { timeout: 15_000 }).toBe("completed");
    expect(await page.getByRole("button", { name: "Reprocessar falhas" }).count()).toBe(0);
    const res = await page.evaluate(async (p) => {
      const r = await fetch(p, { method: "POST", headers: { "x-malha-console": "1" } });
      return { status: r.status, code: ((await r.json()) as { error: { code: string } }).error.code };
    }, `/api/billing/tenants/acme/jobs/boleto/${failedJob}/retry`);
    expect(res).toEqual({ status: 403, code: "PERMISSION_DENIED" });
    await screenshot(page, "cobranca-somente-leitura");
    await page.goto(`${url}/cobranca/acme/webhook`);
    await page.locator('tr[data-state="dead_lettered"]').first().waitFor();
    expect(await page.getByRole("button", { name: /^Reenviar/ }).count()).toBe(0);
    expect(consoleProc.lines.join("\n")).toMatch(/"actor":"leo".*"msg":"console action refused/);
  });
});
