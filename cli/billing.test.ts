// The billing commands against real services (test/support/billing-mesh.ts: a throwaway database, the
// artifacts service and a billing process, each its own process): create a job from a JSON file, follow
// it, list its items, download its zip through the signed link and check it. Commands run in-process
// through run(), the function `cli/main.ts` calls.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { create, toJsonString } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retorno240 } from "../bench/billing/cnab.js";
import { checkCnab } from "../libs/cobranca/index.js";
import { CNAB_FIXTURES } from "../libs/cobranca/testing/fixtures.js";
import { CreateBoletoJobRequestSchema, CreateRemessaJobRequestSchema } from "../libs/gen/malha/billing/v1/billing_pb.js";
import { CnabLayout, RemessaTituloSchema } from "../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment } from "../libs/gen/malha/billing/v1/types_pb.js";
import { boletoInvalido, boletoValido, INVALIDOS } from "../services/billing/testing/fixtures.js";
import { startBillingMesh, type BillingMesh } from "../test/support/billing-mesh.js";
import { RETORNO_INLINE_BYTES } from "./billing-cnab.js";
import { downloadVerified } from "./billing-download.js";
import { EXIT } from "./exit-codes.js";
import { cliRunner } from "./testing/run-cli.js";

const TENANT = "cli-acme";
let mesh: BillingMesh;
let dir: string;
let env: Record<string, string>;
let requestFile: string;

beforeAll(async () => {
  mesh = await startBillingMesh();
  dir = mkdtempSync(join(tmpdir(), "malha-cli-billing-"));
  env = { MALHA_BILLING_URL: mesh.billing[0]!.baseUrl, MALHA_ARTIFACTS_URL: mesh.artifacts.baseUrl };
  // Five boletos, the third one invalid (pagador CPF): the job ends PARTIALLY_COMPLETED.
  const items = [1, 2, 3, 4, 5].map((n) => (n === 3 ? boletoInvalido(n, 0) : boletoValido(n)));
  const req = create(CreateBoletoJobRequestSchema, {
    tenant: TENANT,
    idempotencyKey: "cli-lote-1",
    environment: Environment.SANDBOX,
    items,
  });
  requestFile = join(dir, "job.json");
  writeFileSync(requestFile, toJsonString(CreateBoletoJobRequestSchema, req, { prettySpaces: 2 }));
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const malha = cliRunner(
  () => env,
  (ms) => sleep(ms),
);

const jsonOf = <T>(text: string): T => JSON.parse(text) as T;
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
type JobJson = { jobId: string; state: string; counters: Record<string, number>; idempotentReplay?: boolean; environment: string };

describe("malha billing jobs against the running billing and artifacts services", () => {
  let jobId: string;

  it("creates a job from a JSON file, follows it to its end, and a repeat is the same job", async () => {
    const created = await malha(["billing", "jobs", "create", requestFile, "--wait", "--interval", "0.1", "--timeout", "60", "--json"]);
    expect(created.code, created.err).toBe(EXIT.OK);
    const job = jsonOf<JobJson>(created.out);
    expect(job).toMatchObject({
      state: "PARTIALLY_COMPLETED",
      environment: "SANDBOX",
      idempotentReplay: false,
      counters: { total: 5, completed: 4, failed: 1, skipped: 0 },
    });
    jobId = job.jobId;

    // Same file, same key: the original job (the tenant comes from the file either way).
    const again = await malha(["billing", "jobs", "create", requestFile], { extraEnv: { MALHA_TENANT: "someone-else" } });
    expect(again.code, again.err).toBe(EXIT.OK);
    expect(again.out).toMatch(
      new RegExp(`^already created \\(same key and request\\): ${jobId}: partially_completed, 4 completed, 1 failed`),
    );

    // Same key, different request: refused by the service (exit 4), nothing created.
    const changed = await malha(["billing", "jobs", "create", requestFile, "--environment", "production"]);
    expect(changed.code).toBe(EXIT.REJECTED);
    expect(changed.err).toMatch(/^malha: .*idempotency/i);
  }, 90_000);

  it("lists the tenant's jobs, newest first, by kind and state", async () => {
    const all = jsonOf<{ jobId: string; kind: string; state: string; total: number }[]>(
      (await malha(["billing", "jobs", "list", "--tenant", TENANT, "--json"])).out,
    );
    expect(all.find((j) => j.jobId === jobId)).toMatchObject({ kind: "BOLETO", state: "PARTIALLY_COMPLETED", total: 5 });
    const partial = jsonOf<{ jobId: string }[]>(
      (await malha(["billing", "jobs", "list", "--tenant", TENANT, "--kind", "boleto", "--status", "partially-completed", "--json"])).out,
    );
    expect(partial.map((j) => j.jobId)).toContain(jobId);
    expect(
      jsonOf<unknown[]>(
        (await malha(["billing", "jobs", "list", "--tenant", TENANT, "--kind", "retorno", "--status", "partially-completed", "--json"]))
          .out,
      ),
    ).toEqual([]);
    expect(jsonOf<unknown[]>((await malha(["billing", "jobs", "list", "--tenant", "nobody-here", "--json"])).out)).toEqual([]);
    expect((await malha(["billing", "jobs", "list", "--tenant", TENANT])).out).toMatch(/^JOB\s+KIND\s+STATE\s+ITEMS/);
    expect((await malha(["billing", "jobs", "list", "--tenant", TENANT, "--limit", "0"])).code).toBe(EXIT.USAGE);
    expect((await malha(["billing", "jobs", "list", "--tenant", TENANT, "--kind", "pdf"])).code).toBe(EXIT.USAGE);
  });

  it("shows the job's status as JSON and as a human record", async () => {
    const status = jsonOf<JobJson & { finishedAt: string | null; duracaoMs: number | null }>(
      (await malha(["billing", "jobs", "status", jobId, "--tenant", TENANT, "--json"])).out,
    );
    expect(status).toMatchObject({ jobId, state: "PARTIALLY_COMPLETED", counters: { completed: 4, failed: 1 } });
    expect(status.finishedAt).not.toBeNull();
    expect(status.duracaoMs).toBeGreaterThanOrEqual(0);
    const human = await malha(["billing", "jobs", "status", jobId], { extraEnv: { MALHA_TENANT: TENANT } });
    expect(human.code, human.err).toBe(EXIT.OK);
    expect(human.out).toMatch(/^job\s+\S+\nstate\s+partially_completed\nitems\s+5 total · 4 completed · 1 failed/);
  });

  it("lists items, all or by state, with results and error codes", async () => {
    const all = jsonOf<{ itemId: string; position: number; state: string; linhaDigitavel: string | null }[]>(
      (await malha(["billing", "jobs", "items", jobId, "--tenant", TENANT, "--json"])).out,
    );
    expect(all.map((i) => i.position)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((i) => i.state)).toEqual(["COMPLETED", "COMPLETED", "FAILED", "COMPLETED", "COMPLETED"]);
    expect(all[0]!.linhaDigitavel).toMatch(/^237\d{44}$/);

    const failed = jsonOf<{ itemId: string; errors: { code: string }[] }[]>(
      (await malha(["billing", "jobs", "items", jobId, "--tenant", TENANT, "--status", "failed", "--json"])).out,
    );
    expect(failed).toEqual([
      expect.objectContaining({ itemId: "t-0003", errors: [expect.objectContaining({ code: INVALIDOS[0]!.code })] }),
    ]);

    const table = (await malha(["billing", "jobs", "items", jobId, "--tenant", TENANT])).out.split("\n");
    expect(table[0]).toMatch(/^#\s+ITEM\s+STATE\s+ATTEMPTS\s+NOSSO NUMERO/);
    expect(table.find((l) => l.includes("t-0003"))).toMatch(/failed\s+1\s+-\s+CPF_CNPJ_INVALIDO/);
    expect((await malha(["billing", "jobs", "items", jobId, "--tenant", TENANT, "--status", "done"])).code).toBe(EXIT.USAGE);
  });

  it("downloads the zip through its signed link, verified, and its contents match the manifest", async () => {
    const out = join(dir, "downloads");
    const r = await malha(["billing", "jobs", "download", jobId, "--tenant", TENANT, "--out", out, "--json"]);
    expect(r.code, r.err).toBe(EXIT.OK);
    const got = jsonOf<{ path: string; bytes: number; sha256: string; pdfs: number; items: number }>(r.out);
    expect(got).toMatchObject({ path: join(out, `${jobId}.zip`), pdfs: 4, items: 5 });
    const zip = readFileSync(got.path);
    expect(sha(zip)).toBe(got.sha256);
    expect(zip.length).toBe(got.bytes);
    expect(readdirSync(out)).toEqual([`${jobId}.zip`]); // no partial file left behind

    execFileSync("unzip", ["-q", got.path, "-d", join(dir, "unzipped")]);
    expect(readdirSync(join(dir, "unzipped", "items")).sort()).toEqual(["t-0001.pdf", "t-0002.pdf", "t-0004.pdf", "t-0005.pdf"]);
    const manifest = JSON.parse(readFileSync(join(dir, "unzipped", "manifest.json"), "utf8")) as {
      items: { item_id: string; pdf?: { sha256: string } }[];
    };
    for (const m of manifest.items.filter((i) => i.pdf))
      expect(sha(readFileSync(join(dir, "unzipped", "items", `${m.item_id}.pdf`)))).toBe(m.pdf!.sha256);
    const errors = JSON.parse(readFileSync(join(dir, "unzipped", "errors.json"), "utf8")) as { items: unknown[] };
    expect(errors.items).toHaveLength(1);

    const human = await malha(["billing", "jobs", "download", jobId, "--tenant", TENANT, "--out", out]);
    expect(human.out).toMatch(/\.zip: \d+ bytes, sha256 [0-9a-f]{64} \(verified\), 4 PDFs of 5 items/);
  });

  it("keeps nothing when the bytes do not match the manifest (exit 8)", async () => {
    const body = Buffer.from("not the zip");
    const server: Server = createServer((_req, res) => res.end(body));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
      const path = join(dir, "tampered.zip");
      await expect(
        downloadVerified({ downloadUrl: url, sha256: sha(Buffer.from("the real zip")), sizeBytes: 12n }, path, 5000),
      ).rejects.toMatchObject({ code: EXIT.DOWNLOAD_FAILED });
      expect(existsSync(path)).toBe(false);
      expect(readdirSync(dir).filter((f) => f.startsWith("tampered"))).toEqual([]);
      // The same bytes with the right hash are kept.
      await expect(
        downloadVerified({ downloadUrl: url, sha256: sha(body), sizeBytes: BigInt(body.length) }, path, 5000),
      ).resolves.toMatchObject({ bytes: body.length });
      expect(readFileSync(path)).toEqual(body);
    } finally {
      server.close();
    }
  });

  it("exit codes: no tenant 2, another tenant's job 3, unreadable or invalid file 2, unreachable 5", async () => {
    const none = await malha(["billing", "jobs", "status", jobId]);
    expect(none.code).toBe(EXIT.USAGE);
    expect(none.err).toContain("MALHA_TENANT");
    for (const args of [
      ["status", jobId],
      ["items", jobId],
      ["download", jobId, "--out", join(dir, "intruder")],
    ]) {
      expect((await malha(["billing", "jobs", ...args, "--tenant", "intruso"])).code).toBe(EXIT.NOT_FOUND);
    }
    expect(existsSync(join(dir, "intruder"))).toBe(false);
    expect((await malha(["billing", "jobs", "status", "no-such-job", "--tenant", TENANT])).code).toBe(EXIT.NOT_FOUND);

    expect((await malha(["billing", "jobs", "create", join(dir, "missing.json"), "--tenant", TENANT])).code).toBe(EXIT.USAGE);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ tenant: TENANT, items: [{ valorCents: "abc" }] }));
    expect((await malha(["billing", "jobs", "create", bad])).code).toBe(EXIT.USAGE);
    expect((await malha(["billing", "jobs", "create", requestFile, "--tenant", "other"])).code).toBe(EXIT.USAGE);

    const down = await malha(["billing", "jobs", "status", jobId, "--tenant", TENANT, "--billing-url", "http://127.0.0.1:1"]);
    expect(down.code).toBe(EXIT.UNAVAILABLE);
    expect((await malha(["billing", "jobs", "frobnicate"])).code).toBe(EXIT.USAGE);
    const help = await malha(["help"]);
    for (const c of ["create", "status", "items", "download"]) expect(help.out).toContain(`billing jobs ${c} `);
    expect(help.out).toContain("8 a download failed");
  });

  it("a tenant from MALHA_TENANT fills a file without one, and --wait on a job that FAILED exits 7", async () => {
    const req = create(CreateBoletoJobRequestSchema, {
      idempotencyKey: "cli-all-bad",
      environment: Environment.SANDBOX,
      items: [boletoInvalido(1, 1), boletoInvalido(2, 2)],
    });
    const file = join(dir, "all-bad.json");
    writeFileSync(file, toJsonString(CreateBoletoJobRequestSchema, req));
    const r = await malha(["billing", "jobs", "create", file, "--wait", "--interval", "0.1", "--timeout", "60"], {
      extraEnv: { MALHA_TENANT: TENANT },
    });
    expect(r.code, r.err).toBe(EXIT.RUN_FAILED);
    expect(r.out).toMatch(/^created: \S+: received/);
    expect(r.out.trim().split("\n").at(-1)).toMatch(/: failed, 0 completed, 2 failed/);
    const id = /^created: (\S+):/.exec(r.out)![1]!;
    expect(jsonOf<JobJson>((await malha(["billing", "jobs", "status", id, "--tenant", TENANT, "--json"])).out).state).toBe("FAILED");
    // Nothing completed, so there is no zip to download.
    expect((await malha(["billing", "jobs", "download", id, "--tenant", TENANT, "--out", join(dir, "none")])).code).toBe(EXIT.NOT_FOUND);
  }, 90_000);
});

describe("malha billing remessas and retornos", () => {
  const FIXTURE = (rel: string) => join(CNAB_FIXTURES, rel);
  const CONTAS = [
    { banco: "237", agencia: "1234", agenciaDv: "1", conta: "12345", contaDv: "1", carteira: "09", convenio: "111" },
    { banco: "341", agencia: "1234", agenciaDv: "1", conta: "12345", contaDv: "1", carteira: "109", convenio: "222" },
  ];
  let remessaId: string;

  it("creates a remessa job from a JSON file, follows it, shows its sub-batches and downloads its files verified", async () => {
    const titulos = [1, 2, 3, 4].map((n) =>
      create(RemessaTituloSchema, {
        boleto: boletoValido(n, { conta: CONTAS[n % 2]!, externalId: `r-${n}`, nossoNumero: String(500 + n) }),
      }),
    );
    const file = join(dir, "remessa.json");
    writeFileSync(
      file,
      toJsonString(
        CreateRemessaJobRequestSchema,
        create(CreateRemessaJobRequestSchema, {
          tenant: TENANT,
          idempotencyKey: "cli-rem-1",
          environment: Environment.SANDBOX,
          layout: CnabLayout.CNAB_LAYOUT_240,
          titulos,
        }),
      ),
    );
    const r = await malha(["billing", "remessas", "create", file, "--wait", "--interval", "0.1", "--timeout", "60"]);
    expect(r.code, r.err).toBe(EXIT.OK);
    expect(r.out).toMatch(/^created: \S+: received, 0 of 2 files/);
    expect(r.out).toMatch(/: completed, 2 of 2 files; títulos 4 written, 0 refused of 4/);
    remessaId = /^created: (\S+):/.exec(r.out)![1]!;

    const status = jsonOf<{
      state: string;
      sublotes: { banco: string; titulos: number; state: string; nsa: number; file: string; sha256: string }[];
    }>((await malha(["billing", "remessas", "status", remessaId, "--tenant", TENANT, "--json"])).out);
    expect(status.state).toBe("COMPLETED");
    expect(status.sublotes.map((s) => [s.banco, s.titulos, s.state, s.nsa])).toEqual([
      ["237", 2, "COMPLETED", 1],
      ["341", 2, "COMPLETED", 1],
    ]);
    expect((await malha(["billing", "remessas", "status", remessaId, "--tenant", TENANT])).out).toMatch(/SUB-BATCH\s+BANK\s+LAYOUT/);

    const out = join(dir, "remessas");
    const d = await malha(["billing", "remessas", "download", remessaId, "--tenant", TENANT, "--out", out, "--json"]);
    expect(d.code, d.err).toBe(EXIT.OK);
    const got = jsonOf<{ files: { path: string; sha256: string; banco: string }[] }>(d.out).files;
    expect(got.map((f) => f.banco)).toEqual(["237", "341"]);
    for (const [i, f] of got.entries()) {
      const bytes = readFileSync(f.path);
      expect(sha(bytes)).toBe(status.sublotes[i]!.sha256);
      expect(checkCnab(bytes)).toMatchObject({ ok: true, direction: "remessa", banco: f.banco });
    }
    expect(readdirSync(out).sort()).toEqual(got.map((f) => f.path.split("/").at(-1)).sort());
    expect((await malha(["billing", "remessas", "download", remessaId, "--tenant", "intruso", "--out", join(dir, "x")])).code).toBe(
      EXIT.NOT_FOUND,
    );
  }, 90_000);

  it("uploads a retorno, follows it to its occurrences per state; the same file again is the same job", async () => {
    const file = FIXTURE("retorno/400/brcobranca-341-CNAB400ITAU.RET");
    const r = await malha(["billing", "retornos", "upload", file, "--tenant", TENANT, "--wait", "--interval", "0.1", "--timeout", "60"]);
    expect(r.code, r.err).toBe(EXIT.OK);
    expect(r.out).toMatch(/: completed, brcobranca-341-CNAB400ITAU.RET \(bank 341, 400\), 52 occurrences, 0 duplicates/);
    expect(r.out).toMatch(/STATE\s+OCCURRENCES\s+VALOR PAGO/);
    const id = /^received: (\S+):/.exec(r.out)![1]!;
    const again = await malha(["billing", "retornos", "upload", file, "--tenant", TENANT]);
    expect(again.out).toMatch(new RegExp(`^already received \\(same file\\): ${id}:`));

    const paid = jsonOf<{ state: string; nossoNumero: string }[]>(
      (await malha(["billing", "retornos", "occurrences", id, "--tenant", TENANT, "--state", "paid", "--json"])).out,
    );
    const summary = jsonOf<{ summary: { state: string; count: number }[] }>(
      (await malha(["billing", "retornos", "upload", file, "--tenant", TENANT, "--json"])).out,
    ).summary;
    expect(paid.length).toBe(summary.find((s) => s.state === "PAID")!.count);
    expect(paid.every((o) => o.state === "PAID")).toBe(true);
    expect((await malha(["billing", "retornos", "occurrences", id, "--tenant", TENANT, "--state", "pago"])).code).toBe(EXIT.USAGE);
    expect((await malha(["billing", "retornos", "upload", join(dir, "missing.ret"), "--tenant", TENANT])).code).toBe(EXIT.USAGE);
  }, 90_000);

  it("sends a retorno larger than 4 MiB through the artifacts service instead of inline", async () => {
    const big = join(dir, "big.ret");
    writeFileSync(big, retorno240(20_004, FIXTURE("retorno/240/laravel-boleto-104-caixa.ret")), "latin1");
    expect(readFileSync(big).length).toBeGreaterThan(RETORNO_INLINE_BYTES);
    const r = await malha([
      "billing",
      "retornos",
      "upload",
      big,
      "--tenant",
      TENANT,
      "--wait",
      "--interval",
      "0.2",
      "--timeout",
      "120",
      "--json",
    ]);
    expect(r.code, r.err).toBe(EXIT.OK);
    expect(jsonOf<{ state: string; occurrences: number; fileSha256: string }>(r.out)).toMatchObject({
      state: "COMPLETED",
      occurrences: 10_000,
      fileSha256: sha(readFileSync(big)),
    });
  }, 150_000);
});

describe("malha billing webhooks", () => {
  const HOOKS = "cli-hooks";
  it("sets an endpoint (the secret once), rotates it with a grace period, shows hints only, and deletes it", async () => {
    const set = await malha([
      "billing",
      "webhooks",
      "set",
      "--tenant",
      HOOKS,
      "--url",
      "https://hooks.example/malha",
      "--events",
      "job.boletos.completed",
    ]);
    expect(set.code, set.err).toBe(EXIT.OK);
    const secret = /signing secret \(shown once, store it now\): (whsec_\S+)/.exec(set.out)![1]!;
    const changed = await malha(["billing", "webhooks", "set", "--tenant", HOOKS, "--url", "https://hooks.example/v2", "--json"]);
    expect(jsonOf<{ url: string; secret: string | null; secretHint: string }>(changed.out)).toMatchObject({
      url: "https://hooks.example/v2",
      secret: null,
      secretHint: secret.slice(-4),
    });
    const rotated = jsonOf<{ secret: string; previousSecretHint: string; previousSecretExpiresAt: string }>(
      (
        await malha([
          "billing",
          "webhooks",
          "set",
          "--tenant",
          HOOKS,
          "--url",
          "https://hooks.example/v2",
          "--rotate",
          "--grace",
          "2h",
          "--json",
        ])
      ).out,
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.previousSecretHint).toBe(secret.slice(-4));
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(2 * 3600_000 - 60_000);
    const shown = await malha(["billing", "webhooks", "show", "--tenant", HOOKS]);
    expect(shown.out).toMatch(/previous secret\s+…\S{4}, signs until \d{4}-/);
    expect(shown.out).not.toContain(rotated.secret.slice(6));
    expect(
      (await malha(["billing", "webhooks", "set", "--tenant", HOOKS, "--url", "https://hooks.example/v2", "--grace", "1h"])).code,
    ).toBe(EXIT.USAGE);
    expect(
      (await malha(["billing", "webhooks", "set", "--tenant", HOOKS, "--url", "https://hooks.example/v2", "--rotate", "--grace", "soon"]))
        .code,
    ).toBe(EXIT.USAGE);
    expect((await malha(["billing", "webhooks", "set", "--tenant", HOOKS, "--url", "ftp://hooks.example/"])).code).toBe(EXIT.REJECTED);
    expect((await malha(["billing", "webhooks", "delete", "--tenant", HOOKS])).code).toBe(EXIT.OK);
    expect((await malha(["billing", "webhooks", "show", "--tenant", HOOKS])).code).toBe(EXIT.NOT_FOUND);
  });

  it("lists a job's delivery and sends it again; another tenant cannot", async () => {
    const tenant = "cli-hooks-2";
    // Nobody listens on port 1: the delivery keeps retrying, which is what an operator would look into.
    await malha(["billing", "webhooks", "set", "--tenant", tenant, "--url", "https://127.0.0.1:1/hook"]);
    const req = create(CreateBoletoJobRequestSchema, { tenant, environment: Environment.SANDBOX, items: [boletoValido(1)] });
    const file = join(dir, "hooks-job.json");
    writeFileSync(file, toJsonString(CreateBoletoJobRequestSchema, req));
    const job = jsonOf<JobJson>(
      (await malha(["billing", "jobs", "create", file, "--wait", "--interval", "0.1", "--timeout", "60", "--json"])).out,
    );
    let list: { deliveryId: string; jobId: string; state: string; attempts: number }[] = [];
    for (let i = 0; i < 100 && !list.some((d) => d.attempts > 0); i++) {
      list = jsonOf((await malha(["billing", "webhooks", "deliveries", "--tenant", tenant, "--job", job.jobId, "--json"])).out);
      await sleep(100);
    }
    expect(list).toEqual([expect.objectContaining({ jobId: job.jobId, state: expect.stringMatching(/^(RETRYING|PENDING)$/) })]);
    const id = list[0]!.deliveryId;
    const again = await malha(["billing", "webhooks", "redeliver", id, "--tenant", tenant]);
    expect(again.code, again.err).toBe(EXIT.OK);
    expect(again.out).toContain(`${id}: `);
    expect((await malha(["billing", "webhooks", "redeliver", id, "--tenant", "intruso"])).code).toBe(EXIT.NOT_FOUND);
    expect((await malha(["billing", "webhooks", "deliveries", "--tenant", tenant, "--state", "lost"])).code).toBe(EXIT.USAGE);
    const human = await malha(["billing", "webhooks", "deliveries", "--tenant", tenant]);
    expect(human.out).toMatch(/DELIVERY\s+EVENT\s+JOB\s+STATE/);
  }, 90_000);
});

describe("malha billing with tenant API tokens", () => {
  it("makes a token and its tokens-file line; with the token a command acts for its tenant, without it or for another tenant exit 6", async () => {
    const made = jsonOf<{ tenant: string; token: string; tokensFileLine: string }>(
      (await malha(["billing", "tokens", "new", "--tenant", "cli-tok", "--json"])).out,
    );
    expect(made.token).toMatch(/^bapi_/);
    expect(made.tokensFileLine).toMatch(/^cli-tok [0-9a-f]{64}$/);
    expect(made.tokensFileLine).not.toContain(made.token);
    expect((await malha(["billing", "tokens", "new", "--tenant", "a/b"])).code).toBe(EXIT.USAGE);
    const tokens = join(dir, "tenant-tokens");
    writeFileSync(tokens, `${made.tokensFileLine}\n`);
    const p = await mesh.startBilling({ BILLING_TENANT_TOKENS_FILE: tokens, BILLING_NATS_PREFIX: `bt${process.pid}tok` });
    const url = { MALHA_BILLING_URL: p.baseUrl };
    const req = create(CreateBoletoJobRequestSchema, { environment: Environment.SANDBOX, items: [boletoValido(1)] });
    const file = join(dir, "no-tenant.json");
    writeFileSync(file, toJsonString(CreateBoletoJobRequestSchema, req));

    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, `${made.token}\n`);
    const ok = await malha(["billing", "jobs", "create", file, "--json"], { extraEnv: { ...url, MALHA_BILLING_TOKEN_FILE: tokenFile } });
    expect(ok.code, ok.err).toBe(EXIT.OK);
    expect(jsonOf<JobJson & { tenant: string }>(ok.out).tenant).toBe("cli-tok");

    const none = await malha(["billing", "jobs", "create", file, "--tenant", "cli-tok"], { extraEnv: url });
    expect(none.code).toBe(EXIT.DENIED);
    expect(none.err).toMatch(/API token/);
    const other = await malha(["billing", "jobs", "status", "x", "--tenant", "someone"], {
      extraEnv: { ...url, MALHA_BILLING_TOKEN: made.token },
    });
    expect(other.code).toBe(EXIT.DENIED);
    expect(
      (
        await malha(["billing", "jobs", "status", "x"], {
          extraEnv: { ...url, MALHA_BILLING_TOKEN: made.token, MALHA_BILLING_TOKEN_FILE: tokenFile },
        })
      ).code,
    ).toBe(EXIT.USAGE);
  }, 60_000);
});
