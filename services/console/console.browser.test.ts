// The console in a real browser (Debian's chromium) against the real NFS-e mesh and the ADN simulator:
// sign in, "Sincronizar tudo" and watch the feeds run and then wait with their counts rising, a refused
// "Sincronizar" with the ADN's one-hour rule, and a read-only operator who has no buttons and whose POST
// the API refuses.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../test/support/browser.js";
import { buildConsoleApp, writeUsersFile } from "../../test/support/console-app.js";
import { startNfseMesh, type NfseMesh } from "../../test/support/nfse-mesh.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";

const OPERATOR = { user: "ana", role: "operator" as const, token: "token-da-ana-0123456789" };
const READER = { user: "leo", role: "read-only" as const, token: "token-do-leo-0123456789" };

let dir: string;
let mesh: NfseMesh;
let consoleProc: ServiceProcess;
let browser: Browser;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "malha-console-"));
  const appDir = join(dir, "app");
  const usersFile = join(dir, "users");
  writeUsersFile(usersFile, [OPERATOR, READER]);
  const [builtMesh] = await Promise.all([
    startNfseMesh({
      municipalities: 3,
      feedSize: 400,
      coordinators: 1,
      // Slow enough pages that a run lasts a few page refreshes; no scheduled sweep: only the button syncs.
      switches: { latencyMs: 250 },
      coordinatorEnv: { NFSE_SYNC_INTERVAL_SECONDS: "3600" },
    }),
    buildConsoleApp(appDir),
  ]);
  mesh = builtMesh;
  await mesh.registerAll();
  consoleProc = await startService("console", {
    COORDINATOR_URL: mesh.coordinators[0]!.baseUrl,
    STORE_URL: mesh.store.baseUrl,
    CONSOLE_USERS_FILE: usersFile,
    CONSOLE_SESSION_SECRET: "test-only-session-secret-0123456789abcdef",
    CONSOLE_STATIC_DIR: appDir,
    CONSOLE_HTTP_HOST: "127.0.0.1",
    CONSOLE_HTTP_PORT: "0",
  });
  const listening = consoleProc.lines.find((l) => l.includes('"msg":"console listening"'));
  url = `http://127.0.0.1:${(JSON.parse(listening!) as { httpPort: number }).httpPort}`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  consoleProc?.kill("SIGKILL");
  await mesh?.stop();
  // The screenshots stay: they are the test's artifacts (their paths are logged).
});

async function signIn(who: { user: string; token: string }): Promise<Page> {
  const context = await browser.newContext({ locale: "pt-BR", timezoneId: "America/Sao_Paulo", viewport: { width: 1400, height: 700 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel("Usuário").fill(who.user);
  await page.getByLabel("Token").fill(who.token);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Sincronização" }).waitFor();
  await page.getByText("3 de 3 feeds").waitFor();
  return page;
}

interface Row {
  ibge: string;
  state: string;
  documents: number;
  text: string;
}

const rows = (page: Page): Promise<Row[]> =>
  page.$$eval("tbody tr", (trs) =>
    trs.map((tr) => ({
      ibge: tr.getAttribute("data-ibge") ?? "",
      state: tr.getAttribute("data-state") ?? "",
      documents: Number(tr.getAttribute("data-documents")),
      text: tr.textContent ?? "",
    })),
  );

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`console screenshot: ${path}`);
}

describe("console: Sincronização in a browser", () => {
  let page: Page;

  it("an operator signs in, presses Sincronizar tudo and sees the feeds run, then wait, with counts rising", async () => {
    page = await signIn(OPERATOR);
    expect((await rows(page)).map((r) => r.state)).toEqual(["idle", "idle", "idle"]);
    await page.getByRole("button", { name: "Sincronizar tudo" }).click();
    await expect.poll(() => page.getByTestId("banner").textContent()).toMatch(/^Sincronizar tudo: 3 feeds na fila, 0 feeds recusados\.$/);

    // Watch the page (it refreshes itself): some feed is seen running, then every feed waits.
    const seen = new Set<string>();
    let documentsWhenRunning: number | undefined;
    let last: Row[] = [];
    await expect
      .poll(
        async () => {
          last = await rows(page);
          for (const r of last) seen.add(r.state);
          const total = last.reduce((n, r) => n + r.documents, 0);
          if (documentsWhenRunning === undefined && last.some((r) => r.state === "running")) documentsWhenRunning = total;
          return last.every((r) => r.state === "waiting");
        },
        { timeout: 90_000, interval: 200 },
      )
      .toBe(true);
    expect(seen).toContain("running");
    const total = last.reduce((n, r) => n + r.documents, 0);
    expect(total).toBeGreaterThan(documentsWhenRunning!);
    for (const r of last) {
      expect(r.documents, r.ibge).toBeGreaterThan(0);
      expect(r.text, r.ibge).toMatch(/aguardando até \d\d:\d\d/);
    }
    await screenshot(page, "sincronizacao-operador");
  });

  it("a refused Sincronizar shows the ADN rule's reason", async () => {
    const ibge = mesh.municipalities[0]!.ibge;
    await page.getByRole("button", { name: `Sincronizar ${mesh.municipalities[0]!.name}` }).click();
    await expect
      .poll(() => page.getByTestId(`message-${ibge}`).textContent())
      .toMatch(/^aguardando até \d\d:\d\d — regra de 1 hora do ADN$/);
    await screenshot(page, "sincronizacao-recusada");
  });

  it("refuses a POST without the CSRF header and any call without a session", async () => {
    const noHeader = await page.evaluate(async () => (await fetch("/api/sync-all", { method: "POST" })).status);
    expect(noHeader).toBe(403);
    const anonymous = await fetch(`${url}/api/feeds`);
    expect(anonymous.status).toBe(401);
    const forged = await fetch(`${url}/api/feeds`, {
      headers: { Cookie: "malha_console=eyJ1IjoiYW5hIiwiZXhwIjo5OTk5OTk5OTk5OTk5fQ.AAAA" },
    });
    expect(forged.status).toBe(401);
  });

  it("a read-only operator sees the feeds but no buttons, and the API refuses its POST with 403", async () => {
    const reader = await signIn(READER);
    expect(await reader.getByTestId("who").textContent()).toContain("somente leitura");
    expect(await reader.getByRole("button", { name: /Sincronizar/ }).count()).toBe(0);
    const res = await reader.evaluate(async () => {
      const r = await fetch("/api/sync-all", { method: "POST", headers: { "x-malha-console": "1" } });
      return { status: r.status, body: (await r.json()) as { error: { code: string } } };
    });
    expect(res).toEqual({ status: 403, body: { error: expect.objectContaining({ code: "PERMISSION_DENIED" }) } });
    await screenshot(reader, "sincronizacao-somente-leitura");
    // Filters: by name (case-insensitive), by UF, by state.
    const curitiba = mesh.municipalities.find((m) => m.uf === "PR")!;
    await reader.getByLabel("Buscar (IBGE ou nome)").fill("CURI");
    await reader.getByText("1 de 3 feeds").waitFor();
    expect((await rows(reader)).map((r) => r.ibge)).toEqual([curitiba.ibge]);
    await reader.getByLabel("Buscar (IBGE ou nome)").fill("");
    await reader.getByLabel("UF").selectOption("RJ");
    await reader.getByText("1 de 3 feeds").waitFor();
    await reader.getByLabel("UF").selectOption("");
    await reader.getByLabel("Estado").selectOption("running");
    await reader.getByText("0 de 3 feeds").waitFor();
    // Every action is logged with who pressed it; the refused one with who tried.
    const logs = consoleProc.lines.join("\n");
    expect(logs).toMatch(/"actor":"ana".*"action":"sync-all".*"msg":"console action"/);
    expect(logs).toMatch(/"actor":"leo".*"msg":"console action refused: role read-only"/);
  });
});

afterAll(() => {
  // Keep the screenshots; drop the built app and the users file.
  rmSync(join(dir, "app"), { recursive: true, force: true });
  rmSync(join(dir, "users"), { force: true });
});
