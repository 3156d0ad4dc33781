// The console in a real browser (Debian's chromium) against the real NFS-e mesh, a vault and the ADN
// simulator: sign in, "Sincronizar tudo" and watch the feeds run and then wait with their counts rising, a
// refused "Sincronizar" with the ADN's one-hour rule, a feed's runs and its quarantined item's XML, a note
// found by chave with its events, a certificate imported by an administrator, and a read-only operator who
// has no buttons and whose POST the API refuses.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { launchChromium } from "../../test/support/browser.js";
import { buildConsoleApp, writeUsersFile } from "../../test/support/console-app.js";
import { startNfseMesh, type NfseMesh } from "../../test/support/nfse-mesh.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { createTestRoot, issueEcnpj, toPfx } from "../../tools/adn-sim/icp-brasil.js";
import { createCertificateExpiry } from "./certificate-expiry.js";

const OPERATOR = { user: "ana", role: "operator" as const, token: "token-da-ana-0123456789" };
const READER = { user: "leo", role: "read-only" as const, token: "token-do-leo-0123456789" };
const ADMIN = { user: "ada", role: "admin" as const, token: "token-da-ada-0123456789" };
const VAULT_ADMIN_SECRET = `vault-admin-${randomBytes(8).toString("hex")}`;
/** The second municipality's item at this NSU arrives as broken XML and lands in quarantine. */
let brokenNsu: string;

let dir: string;
let mesh: NfseMesh;
let consoleProc: ServiceProcess;
let vaultProc: ServiceProcess;
let browser: Browser;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "malha-console-"));
  const appDir = join(dir, "app");
  const usersFile = join(dir, "users");
  writeUsersFile(usersFile, [OPERATOR, READER, ADMIN]);
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
  const visible = mesh.sim.feed(mesh.municipalities[1]!.ibge, "DISTRIBUICAO").entries.filter((e) => !e.hidden);
  brokenNsu = String(visible[5]!.nsu);
  mesh.sim.configure({ faultsByNsu: { [brokenNsu]: "malformed-xml" } });
  // The coordinators do not ask this vault (the mesh skips the certificate check); the console imports into it.
  [vaultProc] = await Promise.all([
    startService("vault", {
      MYSQL_URL: mesh.db.url,
      NFSE_MASTER_KEY: randomBytes(32).toString("base64"),
      VAULT_ADMIN_SECRET: VAULT_ADMIN_SECRET,
    }),
    mesh.registerAll(),
  ]);
  consoleProc = await startService("console", {
    COORDINATOR_URL: mesh.coordinators[0]!.baseUrl,
    STORE_URL: mesh.store.baseUrl,
    VAULT_URL: vaultProc.baseUrl,
    CONSOLE_VAULT_ADMIN_SECRET: VAULT_ADMIN_SECRET,
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
  vaultProc?.kill("SIGKILL");
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
  await caption(page, "3 feeds");
  return page;
}

interface Row {
  ibge: string;
  state: string;
  documents: number;
  text: string;
}

const caption = (page: Page, text: string) =>
  page
    .getByTestId("feeds-caption")
    .filter({ hasText: new RegExp(`^${text}$`) })
    .waitFor();

async function download(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent("download"), click()]);
  return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, "utf8") };
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
      // "até 00:05" an hour before midnight reads "até 03/12 00:05": the date shows once it is another day.
      expect(r.text, r.ibge).toMatch(/aguardando até (\d\d\/\d\d )?\d\d:\d\d/);
    }
    await screenshot(page, "sincronizacao-operador");
  });

  it("a refused Sincronizar shows the ADN rule's reason", async () => {
    const ibge = mesh.municipalities[0]!.ibge;
    await page.getByRole("button", { name: `Sincronizar ${mesh.municipalities[0]!.name}` }).click();
    await expect
      .poll(() => page.getByTestId(`message-${ibge}`).textContent())
      .toMatch(/^aguardando até (\d\d\/\d\d )?\d\d:\d\d — regra de 1 hora do ADN$/);
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
    await caption(reader, "1 feed \\(filtrados\\)");
    expect((await rows(reader)).map((r) => r.ibge)).toEqual([curitiba.ibge]);
    await reader.getByLabel("Buscar (IBGE ou nome)").fill("");
    await reader.getByLabel("UF").selectOption("RJ");
    await caption(reader, "1 feed \\(filtrados\\)");
    await reader.getByLabel("UF").selectOption("");
    await reader.getByLabel("Estado").selectOption("running");
    await caption(reader, "0 feeds \\(filtrados\\)");
    // Certificados: the list, but no import form.
    await reader.getByRole("link", { name: "Certificados" }).click();
    await reader.getByLabel("Município").selectOption(mesh.municipalities[0]!.ibge);
    await reader.getByTestId("certificates").waitFor();
    expect(await reader.getByLabel("Arquivo PFX").count()).toBe(0);
    expect(await reader.getByRole("button", { name: "Importar" }).count()).toBe(0);
    // Every action is logged with who pressed it; the refused one with who tried.
    const logs = consoleProc.lines.join("\n");
    expect(logs).toMatch(/"actor":"ana".*"action":"sync-all".*"msg":"console action"/);
    expect(logs).toMatch(/"actor":"leo".*"msg":"console action refused: role read-only"/);
  });

  it("a feed's page shows its runs after the sync, and a quarantined item's XML downloads", async () => {
    const m = mesh.municipalities[1]!;
    await page.getByRole("link", { name: "Sincronização" }).click();
    await page.getByRole("link", { name: m.name, exact: true }).click();
    await page.getByRole("heading", { name: `${m.name} · distribuição · produção restrita` }).waitFor();
    const runs = page.getByTestId("runs").locator("tbody tr");
    await runs.first().waitFor();
    // Newest first: the run that caught up; the oldest is the one "Sincronizar tudo" started from NSU 0.
    const shown = await runs.evaluateAll((trs) =>
      trs.map((tr) => ({ outcome: tr.getAttribute("data-outcome"), text: tr.textContent ?? "" })),
    );
    expect(shown[0]!.outcome).toBe("caught_up");
    expect(shown[0]!.text).toMatch(/em dia/);
    expect(shown.at(-1)!.text).toMatch(/^.*Sincronizar tudoNSU 0 → \d+/);
    const row = page.getByTestId("quarantine").locator(`tbody tr[data-nsu="${brokenNsu}"]`);
    expect(await row.textContent()).toContain("XML malformado");
    await screenshot(page, "feed");
    const file = await download(page, () => row.getByRole("link", { name: `Baixar o XML do NSU ${brokenNsu}` }).click());
    expect(file.name).toBe(`quarentena-${m.ibge}-${brokenNsu}.xml`);
    // The item exactly as decompressed: the broken XML, its closing infNFSe/infEvento tag missing.
    expect(file.text).toMatch(/^<\?xml|^<(NFSe|evento)/);
    expect(file.text).not.toMatch(/<\/(infNFSe|infEvento)>/);
  });

  it("Documentos finds a note by chave and shows its events; its XML downloads", async () => {
    const m = mesh.municipalities[0]!;
    const { events } = await mesh.storeClient.listEvents({ ibge: m.ibge, pageSize: 200 });
    const chave = events.find((e) => e.documentPresent)!.event!.chave;
    await page.getByRole("link", { name: "Documentos" }).click();
    await page.getByLabel("Município").selectOption(m.ibge);
    await page.getByLabel("Chave de acesso").fill(chave);
    await page.keyboard.press("Enter");
    const found = page.getByTestId("documents").locator("tbody tr");
    await found.first().waitFor();
    expect(await found.count()).toBe(1);
    await screenshot(page, "documentos");
    await found.getByRole("link", { name: chave }).click();
    await page.getByTestId("document-facts").waitFor();
    expect(await page.getByTestId("document-facts").textContent()).toContain(chave);
    const eventRows = page.getByTestId("events").locator("tbody tr");
    const stored = await mesh.storeClient.listEvents({ ibge: m.ibge, chave, pageSize: 100 });
    expect(await eventRows.count()).toBe(stored.events.length);
    await screenshot(page, "documento");
    const xml = await download(page, () => page.getByRole("link", { name: "Baixar XML" }).click());
    expect(xml.name).toBe(`NFS${chave}.xml`);
    expect(xml.text).toContain(chave);
  });

  it("an administrator imports a PFX on Certificados; it becomes the active one", async () => {
    const m = mesh.municipalities[2]!;
    const admin = await signIn(ADMIN);
    await admin.getByRole("link", { name: "Certificados" }).click();
    await admin.getByLabel("Município").selectOption(m.ibge);
    await admin.getByText("Nenhum certificado no cofre para este município.").waitFor();
    const root = createTestRoot();
    const pfx = toPfx(issueEcnpj(root, { cnpj: m.cnpj }), [root], "senha-do-pfx");
    await admin.getByLabel("Arquivo PFX").setInputFiles({ name: "prefeitura.pfx", mimeType: "application/x-pkcs12", buffer: pfx });
    await admin.getByLabel("Senha do PFX").fill("senha-do-pfx");
    await admin.getByRole("button", { name: "Importar" }).click();
    await expect.poll(() => admin.getByTestId("import-result").textContent()).toMatch(/^Importado: CNPJ .* agora é o certificado ativo\.$/);
    // The field is emptied as soon as the request leaves; nothing of it is kept by the page.
    expect(await admin.getByLabel("Senha do PFX").inputValue()).toBe("");
    const listed = admin.getByTestId("certificates").locator("tbody tr");
    await listed.first().waitFor();
    expect(await listed.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-status")))).toEqual(["active"]);
    expect(await listed.first().textContent()).toMatch(/vence em \d+ dias/);
    await screenshot(admin, "certificados");
    // What the Sincronização page's certificate column reads from this vault: the new certificate's expiry.
    const fromVault = await createCertificateExpiry(
      createClient(VaultService, createGrpcTransport({ baseUrl: vaultProc.baseUrl })),
    ).byIbge();
    expect([...fromVault.keys()]).toEqual([m.ibge]);
    expect(new Date(fromVault.get(m.ibge)!).getTime()).toBeGreaterThan(Date.now() + 30 * 86_400_000);
    const logs = consoleProc.lines.join("\n");
    expect(logs).toMatch(/"actor":"ada","action":"import-certificate","ibge":"\d{7}"/);
    expect(logs).not.toContain("senha-do-pfx");
  });
});

afterAll(() => {
  // Keep the screenshots; drop the built app and the users file.
  rmSync(join(dir, "app"), { recursive: true, force: true });
  rmSync(join(dir, "users"), { force: true });
});
