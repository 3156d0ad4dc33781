// The CLI against a real mesh: the ADN simulator, store, vault, ADN gateway (credentials from the vault)
// and a coordinator, each its own process from main.ts. Commands run in-process through run(), the
// same function `cli/main.ts` calls; one test spawns the script itself.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAdnSimulator, type AdnSimulator } from "../tools/adn-sim/server.js";
import { createTestRoot, issueEcnpj, issueServer, toPfx } from "../tools/adn-sim/icp-brasil.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../test/support/mysql.js";
import { cnpjFrom } from "../test/support/nfse-mesh.js";
import { startService, type ServiceProcess } from "../test/support/service-process.js";
import { EXIT } from "./exit-codes.js";
import { cliRunner } from "./testing/run-cli.js";
import { formatTaxId } from "../libs/tax-id/index.js";

const IBGE = "3550308";
const CNPJ = cnpjFrom("463950000001");
const PASSWORD = "senha do pfx";
const VAULT_SECRET = "cli-test-shared-vault-secret";
const VAULT_ADMIN_SECRET = "cli-test-vault-admin-secret";

let dir: string;
let db: ThrowawayDatabase;
let sim: AdnSimulator;
const procs: ServiceProcess[] = [];
let env: Record<string, string>;
let pfxFile: string;
let passwordFile: string;

beforeAll(async () => {
  const natsUrl = process.env.NATS_URL;
  if (!natsUrl) throw new Error("NATS_URL is not set: export the stack env (`bash scripts/stack.sh env`)");
  dir = mkdtempSync(join(tmpdir(), "malha-cli-"));
  const root = createTestRoot();
  const server = issueServer(root);
  const leaf = issueEcnpj(root, { cnpj: CNPJ, razaoSocial: "MUNICIPIO DE SAO PAULO" });
  pfxFile = join(dir, "sp.pfx");
  writeFileSync(pfxFile, toPfx(leaf, [root], PASSWORD));
  passwordFile = join(dir, "password");
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  const caFile = join(dir, "adn-ca.pem");
  writeFileSync(caFile, root.certPem);

  sim = await startAdnSimulator({
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    clientCaPem: root.certPem,
    municipalities: [{ ibge: IBGE, cnpj: CNPJ }],
    feedSize: 40,
  });
  db = await createThrowawayDatabase();
  const [store, vault] = await Promise.all([
    startService("store", { MYSQL_URL: db.url }),
    startService("vault", {
      MYSQL_URL: db.url,
      NFSE_MASTER_KEY: Buffer.alloc(32, 9).toString("base64"),
      VAULT_CREDENTIALS_SECRET: VAULT_SECRET,
      VAULT_ADMIN_SECRET,
    }),
  ]);
  procs.push(store, vault);
  const gateway = await startService("adn-gateway", {
    VAULT_URL: vault.baseUrl,
    STORE_URL: store.baseUrl,
    VAULT_CREDENTIALS_SECRET: VAULT_SECRET,
    ADN_CA_FILE: caFile,
    ADN_BASE_URL_PRODUCAO: sim.url,
    ADN_BASE_URL_PRODUCAO_RESTRITA: sim.url,
    NFSE_REQUEST_TIMEOUT_SECONDS: "5",
    NFSE_RETRY_BACKOFF_BASE_SECONDS: "0.05",
    NFSE_RETRY_BACKOFF_MAX_SECONDS: "0.5",
  });
  procs.push(gateway);
  const coordinator = await startService("coordinator", {
    NATS_URL: natsUrl,
    STORE_URL: store.baseUrl,
    ADN_GATEWAY_URL: gateway.baseUrl,
    VAULT_URL: vault.baseUrl,
    COORDINATOR_LEASE_BUCKET: `leases_cli_${process.pid}`,
    // A job enqueued by the SyncNow RPC currently inherits the RPC's cancellation and dies with
    // "[canceled]" at BeginRun once the call returns (coordinator bug, reported); the 1-second sweep then
    // runs the feed, which `sync now --wait` follows either way.
    NFSE_SYNC_INTERVAL_SECONDS: "1",
  });
  procs.push(coordinator);
  const adminSecretFile = join(dir, "vault-admin-secret");
  writeFileSync(adminSecretFile, `${VAULT_ADMIN_SECRET}\n`, { mode: 0o600 });
  env = {
    MALHA_STORE_URL: store.baseUrl,
    MALHA_VAULT_URL: vault.baseUrl,
    MALHA_COORDINATOR_URL: coordinator.baseUrl,
    MALHA_VAULT_ADMIN_SECRET_FILE: adminSecretFile,
  };
}, 120_000);

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await sim?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const malha = cliRunner(
  () => env,
  (ms) => sleep(ms),
);

const jsonOf = <T>(text: string): T => JSON.parse(text) as T;

describe("malha CLI against the running mesh", () => {
  it("drives the whole flow: municipality, certificate, sync now, live status until done, documents, runs", async () => {
    const added = await malha([
      "municipalities",
      "add",
      IBGE,
      "--name",
      "São Paulo",
      "--uf",
      "sp",
      "--feed",
      "producao-restrita:distribuicao",
    ]);
    expect(added).toMatchObject({ code: EXIT.OK, err: "" });
    expect(added.out).toMatch(/^registered: 3550308 São Paulo\/SP, feeds producao_restrita:distribuicao/);

    const listed = jsonOf<{ ibge: string; uf: string; active: boolean }[]>((await malha(["municipalities", "list", "--json"])).out);
    expect(listed).toEqual([expect.objectContaining({ ibge: IBGE, uf: "SP", active: true })]);

    const imported = await malha(["certificates", "import", IBGE, pfxFile, "--password-file", passwordFile, "--json"]);
    expect(imported.code, imported.err).toBe(EXIT.OK);
    expect(jsonOf(imported.out)).toMatchObject({ ibge: IBGE, cnpj: CNPJ, status: "ACTIVE", created: true, activated: true });

    const decided = await malha(["sync", "now", IBGE, "--wait", "--interval", "0.2", "--timeout", "50", "--json"]);
    expect(decided.code, decided.err).toBe(EXIT.OK);
    const result = jsonOf<{
      decisions: { feed: string; accepted: boolean }[];
      runs: { feed: string; outcome: string; documentsInserted: string }[];
    }>(decided.out);
    expect(result.decisions).toEqual([{ feed: `${IBGE}/producao_restrita/distribuicao`, accepted: expect.any(Boolean) }]);
    expect(result.runs).toEqual([expect.objectContaining({ feed: `${IBGE}/producao_restrita/distribuicao`, outcome: "CAUGHT_UP" })]);

    const watched = await malha([
      "sync",
      "status",
      "--ibge",
      IBGE,
      "--watch",
      "--until-idle",
      "--interval",
      "0.2",
      "--timeout",
      "50",
      "--json",
    ]);
    expect(watched.code, watched.err).toBe(EXIT.OK);
    const last = jsonOf<{ state: string; documents: string; lastOutcome: string }[]>(watched.out.trim().split("\n").at(-1)!);
    expect(last).toHaveLength(1);
    expect(["IDLE", "WAITING"]).toContain(last[0]!.state);
    expect(last[0]!.lastOutcome).toBe("CAUGHT_UP");
    expect(last[0]!.documents).toBe(result.runs[0]!.documentsInserted);
    expect(Number(last[0]!.documents)).toBeGreaterThan(0);

    const docs = jsonOf<{ documents: { nsu: string; chave: string }[] }>(
      (await malha(["documents", "list", IBGE, "--limit", "5", "--json"])).out,
    );
    expect(docs.documents).toHaveLength(5);
    expect(docs.documents[0]!.chave).toMatch(/^[0-9]{9}[0-9A-Z]{14}[0-9]{27}$/);

    // A note of a company with an alphanumeric CNPJ: shown with its letters, found by the CNPJ as people write it.
    const alfa = sim
      .feed(IBGE, "DISTRIBUICAO")
      .entries.flatMap((e) =>
        e.facts.kind === "NFSE" && !e.hidden && e.facts.note.tomador?.doc.kind === "CNPJ" && /[A-Z]/.test(e.facts.note.tomador.doc.number)
          ? [e.facts.note]
          : [],
      )[0]!;
    expect(alfa).toBeDefined();
    const tomador = alfa.tomador!.doc.number;
    const shown = await malha(["documents", "show", IBGE, alfa.chave]);
    expect(shown.code, shown.err).toBe(EXIT.OK);
    expect(shown.out).toContain(formatTaxId(tomador));
    const byTomador = jsonOf<{ documents: { chave: string }[] }>(
      (await malha(["documents", "list", IBGE, "--tomador", formatTaxId(tomador), "--json"])).out,
    );
    expect(byTomador.documents.map((d) => d.chave)).toContain(alfa.chave);
    const lower = await malha(["documents", "list", IBGE, "--tomador", tomador.toLowerCase()]);
    expect(lower.code).toBe(EXIT.USAGE);
    expect(lower.err).toMatch(/lower-case/);

    const runs = jsonOf<{ outcome: string; documentsInserted: string }[]>((await malha(["sync", "runs", "--ibge", IBGE, "--json"])).out);
    expect(runs[0]).toMatchObject({ outcome: "CAUGHT_UP", documentsInserted: last[0]!.documents });

    // A second `sync now` right after catching up is refused by the one-hour rule, and says so.
    // Its own exit code (9), so a script can tell that nothing ran; --wait has nothing to follow either.
    const again = await malha(["sync", "now", IBGE]);
    expect(again.code).toBe(EXIT.NOTHING_RAN);
    expect(again.out).toMatch(/skipped: not_eligible/);
    expect(again.err).toBe("malha: nothing ran: every feed was skipped (not_eligible)\n");
    const waited = await malha(["sync", "now", IBGE, "--wait", "--json"]);
    expect(waited.code).toBe(EXIT.NOTHING_RAN);
    expect(jsonOf(waited.out)).toEqual({ decisions: [{ feed: `${IBGE}/producao_restrita/distribuicao`, accepted: false }], runs: [] });
    expect(jsonOf(waited.err)).toEqual({
      error: { exitCode: 9, code: "nothing_ran", message: "nothing ran: every feed was skipped (not_eligible)" },
    });
    // `sync all` with every feed skipped: the same exit code, and each feed's reason in the table.
    const sweep = await malha(["sync", "all"]);
    expect(sweep.code).toBe(EXIT.NOTHING_RAN);
    expect(sweep.out).toMatch(/: 0 queued, 1 skipped/);
    expect(sweep.out).toMatch(new RegExp(`${IBGE}/producao_restrita/distribuicao\\s+skipped: not_eligible`));
    expect(sweep.err).toBe("malha: nothing ran: every feed was skipped (not_eligible)\n");

    const table = await malha(["sync", "status", "--ibge", IBGE]);
    expect(table.out.split("\n")[0]).toMatch(/^FEED\s+STATE\s+CURSOR/);
    expect(table.out).toContain(`${IBGE}/producao_restrita/distribuicao`);
  }, 90_000);

  it("lists certificates and the ones expiring within a window", async () => {
    const all = await malha(["certificates", "list", "--ibge", IBGE]);
    expect(all.out.split("\n")[0]).toMatch(/^ID\s+IBGE\s+CNPJ\s+STATUS/);
    expect(all.out).toContain(CNPJ);
    // The test certificate is valid for a year: inside a 400-day window, outside a 1-day one.
    expect(jsonOf<unknown[]>((await malha(["certificates", "expiring", "--days", "400", "--json"])).out)).toHaveLength(1);
    expect(jsonOf<unknown[]>((await malha(["certificates", "expiring", "--days", "1", "--json"])).out)).toEqual([]);
  });

  it("takes the PFX password from MALHA_PFX_PASSWORD, and a wrong one is a rejection (exit 4)", async () => {
    const again = await malha(["certificates", "import", IBGE, pfxFile, "--json"], { extraEnv: { MALHA_PFX_PASSWORD: PASSWORD } });
    expect(again.code, again.err).toBe(EXIT.OK);
    expect(jsonOf(again.out)).toMatchObject({ created: false });
    const wrong = await malha(["certificates", "import", IBGE, pfxFile], { extraEnv: { MALHA_PFX_PASSWORD: "not it" } });
    expect(wrong.code).toBe(EXIT.REJECTED);
    expect(wrong.err).toMatch(/^malha: /);
  });

  it("prompts for the password on a terminal, and refuses to run without any source of it", async () => {
    const asked: string[] = [];
    const prompted = await malha(["certificates", "import", IBGE, pfxFile], { promptSecret: async (q) => (asked.push(q), PASSWORD) });
    expect(prompted.code, prompted.err).toBe(EXIT.OK);
    expect(asked).toEqual(["PFX password: "]);
    const none = await malha(["certificates", "import", IBGE, pfxFile]);
    expect(none.code).toBe(EXIT.USAGE);
    expect(none.err).toContain("MALHA_PFX_PASSWORD");
  });

  it("imports only as the vault's administrator: without the admin secret it is denied (exit 6), with it in the environment it works", async () => {
    const { MALHA_VAULT_ADMIN_SECRET_FILE: _file, ...anonymous } = env;
    const args = ["certificates", "import", IBGE, pfxFile, "--password-file", passwordFile];
    const denied = await malha(args, { env: anonymous });
    expect(denied.code).toBe(EXIT.DENIED);
    expect(denied.err).toMatch(
      /^malha: \[unauthenticated\] ImportCertificate is an administrative call and needs the x-malha-vault-admin-secret header/,
    );
    const fromEnv = await malha(args, { env: { ...anonymous, MALHA_VAULT_ADMIN_SECRET: VAULT_ADMIN_SECRET } });
    expect(fromEnv.code, fromEnv.err).toBe(EXIT.OK);
    const both = await malha(["certificates", "import", IBGE, pfxFile, "--password-file", passwordFile], {
      extraEnv: { MALHA_VAULT_ADMIN_SECRET: VAULT_ADMIN_SECRET },
    });
    expect(both.code).toBe(EXIT.USAGE);
    expect(both.err).toContain("not both");
    expect(both.err).not.toContain(VAULT_ADMIN_SECRET);
  });

  it("never accepts the password as an argument", async () => {
    for (const args of [["--password", PASSWORD], [`--password=${PASSWORD}`]]) {
      const r = await malha(["certificates", "import", IBGE, pfxFile, ...args]);
      expect(r.code).toBe(EXIT.USAGE);
      expect(r.err).toContain("never an argument");
      expect(r.err).not.toContain(PASSWORD);
    }
  });

  it("exit codes: not found 3, unreachable 5, usage 2", async () => {
    expect((await malha(["sync", "now", "4106902"])).code).toBe(EXIT.NOT_FOUND);
    const down = await malha(["municipalities", "list", "--store-url", "http://127.0.0.1:1"]);
    expect(down.code).toBe(EXIT.UNAVAILABLE);
    expect((await malha(["municipalities", "frobnicate"])).code).toBe(EXIT.USAGE);
    expect((await malha(["municipalities", "add", IBGE])).code).toBe(EXIT.USAGE);
    expect((await malha(["sync", "status", "--until-idle"])).code).toBe(EXIT.USAGE);
    expect((await malha(["certificates", "list", "--status", "bogus"])).code).toBe(EXIT.USAGE);
  });

  it("with --json, errors are JSON too: an RPC refusal, an unreachable service, a bad command line", async () => {
    const missing = await malha(["sync", "now", "4106902", "--json"]);
    expect(missing.code).toBe(EXIT.NOT_FOUND);
    expect(missing.out).toBe("");
    expect(jsonOf(missing.err)).toEqual({ error: { exitCode: 3, code: "not_found", message: expect.stringContaining("4106902") } });
    const down = jsonOf<{ error: { exitCode: number; code: string } }>(
      (await malha(["municipalities", "list", "--json", "--store-url", "http://127.0.0.1:1"])).err,
    );
    expect(down.error).toMatchObject({ exitCode: 5, code: "unavailable" });
    const usage = await malha(["municipalities", "frobnicate", "--json"]);
    expect(usage.code).toBe(EXIT.USAGE);
    expect(jsonOf(usage.err)).toEqual({ error: { exitCode: 2, code: "usage", message: expect.stringContaining("unknown command") } });
    const badFlag = await malha(["sync", "status", "--json", "--no-such-flag"]);
    expect(jsonOf<{ error: { code: string } }>(badFlag.err).error.code).toBe("usage");
  });

  it("a feed that never ran shows last outcome `never ran` (null in JSON), not `unspecified`", async () => {
    const rio = "3304557";
    const added = await malha([
      "municipalities",
      "add",
      rio,
      "--name",
      "Rio de Janeiro",
      "--uf",
      "RJ",
      "--feed",
      "producao-restrita:distribuicao",
    ]);
    expect(added.code, added.err).toBe(EXIT.OK);
    // No certificate: the coordinator skips it, so it never runs.
    const table = await malha(["sync", "status", "--ibge", rio]);
    expect(table.code, table.err).toBe(EXIT.OK);
    const row = table.out.split("\n").find((l) => l.startsWith(`${rio}/`))!;
    expect(row).toContain("never ran");
    expect(table.out.toLowerCase()).not.toContain("unspecified");
    const [status] = jsonOf<{ lastOutcome: string | null; lastSuccessAt: string | null }[]>(
      (await malha(["sync", "status", "--ibge", rio, "--json"])).out,
    );
    expect(status).toMatchObject({ lastOutcome: null, lastSuccessAt: null });
  });

  it("a watch ends with exit 5 once its --timeout budget of refreshes is spent", async () => {
    // Without --until-idle nothing else ends it: 0.1 s at 0.05 s per refresh is two frames.
    const r = await malha(["sync", "status", "--ibge", IBGE, "--watch", "--interval", "0.05", "--timeout", "0.1", "--json"], {
      sleep: async () => undefined,
    });
    expect(r.code).toBe(EXIT.UNAVAILABLE);
    expect(r.out.trim().split("\n")).toHaveLength(2);
  });

  it("runs as a script: `tsx cli/main.ts` prints help and exits with the usage code on a bad command", () => {
    const ok = spawnSync(process.execPath, ["--import", "tsx", "cli/main.ts", "help"], { encoding: "utf8" });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain("exit codes: 0 ok");
    const bad = spawnSync(process.execPath, ["--import", "tsx", "cli/main.ts", "nope"], { encoding: "utf8" });
    expect(bad.status).toBe(EXIT.USAGE);
    expect(bad.stderr).toContain('unknown command "nope"');
  });
});
