// The simulator on its own: the ADN's wire behaviour over real HTTPS + mTLS, its switches and counters,
// the CLI, and the realism of the generated data.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { Agent, request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isValidChave } from "../../libs/adn/chave.js";
import { EVENT_CODES } from "../../libs/adn/event-codes.js";
import { isValidCnpj, isValidCpf } from "../../libs/tax-id/index.js";
import { createTestRoot, issueEcnpj } from "./icp-brasil.js";
import { FeedGenerator } from "./generate.js";
import type { TaxIdFacts } from "./model.js";
import { createSimPki, type SimPki } from "./pki.js";
import { startAdnSimulator, type AdnSimulator } from "./server.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SP = { ibge: "3550308", cnpj: "11222333000181" };
const STRANGER = { ibge: "3304557", cnpj: "99888777000100" };

let pki: SimPki;
let sim: AdnSimulator;
const agents: Agent[] = [];

function agent(opts: { certPem?: string; keyPem?: string } = {}): Agent {
  const a = new Agent({ connect: { ca: pki.root.certPem, ...(opts.certPem ? { cert: opts.certPem, key: opts.keyPem } : {}) } });
  agents.push(a);
  return a;
}

async function get(dispatcher: Agent, path: string) {
  const res = await request(`${sim.url}${path}`, { dispatcher, headers: { accept: "application/json" } });
  const text = await res.body.text();
  const type = String(res.headers["content-type"] ?? "");
  return {
    status: res.statusCode,
    type,
    text,
    // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever JSON the simulator answered.
    json: type.startsWith("application/json") ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

let sp: Agent;
beforeAll(async () => {
  pki = createSimPki([SP, STRANGER]);
  sim = await startAdnSimulator({
    serverCertPem: pki.server.certPem,
    serverKeyPem: pki.server.keyPem,
    clientCaPem: pki.root.certPem,
    municipalities: [SP],
    seed: 3,
    feedSize: 300,
  });
  sp = agent({ certPem: pki.clients.get(SP.ibge)!.certPem, keyPem: pki.clients.get(SP.ibge)!.keyPem });
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await sim?.close();
});
beforeEach(() => sim.reset());

describe("ADN wire behaviour", () => {
  it("serves a PascalCase batch with gzip+Base64 XML; /DFe/ and /dfe/ alike; TipoEvento only on events", async () => {
    const upper = await get(sp, "/municipios/DFe/0?tipoNSU=DISTRIBUICAO&lote=true");
    const lower = await get(sp, "/municipios/dfe/0?tipoNSU=DISTRIBUICAO&lote=true");
    expect(upper.status).toBe(200);
    expect(lower.json!.LoteDFe.map((i: { NSU: number }) => i.NSU)).toEqual(upper.json!.LoteDFe.map((i: { NSU: number }) => i.NSU));
    const env = upper.json!;
    expect(env).toMatchObject({ StatusProcessamento: "DOCUMENTOS_LOCALIZADOS", TipoAmbiente: "HOMOLOGACAO", VersaoAplicativo: "1.0.0.0" });
    expect(env.DataHoraProcessamento).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}-03:00$/);
    expect(env.LoteDFe).toHaveLength(50);
    for (const item of env.LoteDFe as Record<string, unknown>[]) {
      expect(item.ArquivoXml).toMatch(/^H4sI/);
      expect(item.DataHoraGeracao).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,3}$/);
      const xml = gunzipSync(Buffer.from(item.ArquivoXml as string, "base64")).toString();
      if (item.TipoDocumento === "NFSE") {
        expect("TipoEvento" in item).toBe(false);
        expect(xml).toContain(`<infNFSe Id="NFS${item.ChaveAcesso}"`);
      } else {
        expect(item.TipoDocumento).toBe("EVENTO");
        expect(EVENT_CODES.map((c) => c.adnName)).toContain(item.TipoEvento);
        expect(xml).toContain(`<chNFSe>${item.ChaveAcesso}</chNFSe>`);
      }
    }
    expect(sim.counters().byFeed[`${SP.ibge}/DISTRIBUICAO`]).toEqual({ batch: 2, single: 0 });
  });

  it("ends the stream with 404 NENHUM_DOCUMENTO_LOCALIZADO E2020 and answers holes with E2040", async () => {
    const log = sim.feed(SP.ibge);
    const end = await get(sp, `/municipios/DFe/${log.lastNsu()}?tipoNSU=DISTRIBUICAO`);
    expect(end.status).toBe(404);
    expect(end.json).toMatchObject({ StatusProcessamento: "NENHUM_DOCUMENTO_LOCALIZADO", LoteDFe: [], Erros: [{ Codigo: "E2020" }] });
    sim.configure({ startInclusive: true });
    const inclusive = await get(sp, `/municipios/DFe/${log.lastNsu()}?tipoNSU=DISTRIBUICAO`);
    expect(inclusive.json!.LoteDFe.map((i: { NSU: number }) => BigInt(i.NSU))).toEqual([log.lastNsu()]);
    const hole = [...log.holes][0]!;
    const single = await get(sp, `/municipios/DFe/${hole}?tipoNSU=DISTRIBUICAO&lote=false`);
    expect(single.status).toBe(404);
    expect(single.json!.Erros[0].Codigo).toBe("E2040");
    const hidden = log.entries.find((e) => e.hidden)!;
    const back = await get(sp, `/municipios/DFe/${hidden.nsu}?tipoNSU=DISTRIBUICAO&lote=false`);
    expect(back.json!.LoteDFe.map((i: { NSU: number }) => BigInt(i.NSU))).toEqual([hidden.nsu]);
  });

  it("forgets the entries through an NSU: batches from below start at the first kept, single look-ups of them 404", async () => {
    // A feed of its own: the log is the simulator's state, which reset() keeps.
    const log = sim.feed(SP.ibge, "RECEPCAO");
    const visible = log.entries.filter((e) => !e.hidden);
    const cut = visible[120]!.nsu;
    const before = log.entries.length;
    const dropped = log.forgetThrough(cut);
    expect(log.entries.length).toBe(before - dropped);
    expect(dropped).toBeGreaterThan(100);
    expect(log.entries[0]!.nsu).toBeGreaterThan(cut);
    const batch = await get(sp, "/municipios/DFe/0?tipoNSU=RECEPCAO&lote=true");
    expect(batch.status).toBe(200);
    const first = log.entries.find((e) => !e.hidden)!.nsu;
    expect(BigInt(batch.json!.LoteDFe[0].NSU)).toBe(first);
    const gone = await get(sp, `/municipios/DFe/${cut}?tipoNSU=RECEPCAO&lote=false`);
    expect(gone.status).toBe(404);
    const kept = await get(sp, `/municipios/DFe/${first}?tipoNSU=RECEPCAO&lote=false`);
    expect(kept.json!.LoteDFe.map((i: { NSU: number }) => BigInt(i.NSU))).toEqual([first]);
    expect(log.forgetThrough(cut)).toBe(0);
  });

  it("rejects missing, foreign-CA and unknown-CNPJ certificates with the ADN's codes", async () => {
    const none = await get(agent(), "/municipios/DFe/0");
    expect(none).toMatchObject({ status: 400, json: { StatusProcessamento: "REJEICAO", Erros: [{ Codigo: "E2000" }] } });
    const otherRoot = createTestRoot("AC Estranha");
    const foreign = issueEcnpj(otherRoot, { cnpj: SP.cnpj });
    expect((await get(agent({ certPem: foreign.certPem, keyPem: foreign.keyPem }), "/municipios/DFe/0")).json!.Erros[0].Codigo).toBe(
      "E1205",
    );
    const expired = issueEcnpj(pki.root, {
      cnpj: SP.cnpj,
      notBefore: new Date(Date.now() - 400 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    expect((await get(agent({ certPem: expired.certPem, keyPem: expired.keyPem }), "/municipios/DFe/0")).json!.Erros[0].Codigo).toBe(
      "E1203",
    );
    const stranger = pki.clients.get(STRANGER.ibge)!;
    const unknown = await get(agent({ certPem: stranger.certPem, keyPem: stranger.keyPem }), "/municipios/DFe/0");
    expect(unknown).toMatchObject({ status: 400, json: { StatusProcessamento: "REJEICAO", Erros: [{ Codigo: "E2001" }] } });
    expect((await get(sp, "/municipios/DFe/0?tipoNSU=GERAL")).json!.Erros[0].Codigo).toBe("E2301");
    // Missing, foreign-CA and expired certificates identify nobody.
    expect(sim.counters().byCnpj).toEqual({ none: 3, [STRANGER.cnpj]: 1, [SP.cnpj]: 1 });
  });

  it("answers 429 and 503 as HTML pages, per switch", async () => {
    sim.configure({ rateLimit: { maxCalls: 2, windowMs: 60_000 }, fail503Next: 1 });
    const outage = await get(sp, "/municipios/DFe/0");
    expect(outage.status).toBe(503);
    expect(outage.type).toContain("text/html");
    expect((await get(sp, "/municipios/DFe/0")).status).toBe(200);
    expect((await get(sp, "/municipios/DFe/0")).status).toBe(200);
    const limited = await get(sp, "/municipios/DFe/0");
    expect(limited.status).toBe(429);
    expect(limited.type).toContain("text/html");
    expect(limited.text).toContain("<html>");
    expect(sim.counters().byStatus).toEqual({ "200": 2, "429": 1, "503": 1 });
  });

  it("applies latency, seeded random 503s and per-item corruption rates", async () => {
    sim.configure({ latencyMs: 400 });
    // The answer is held back: a client that waits 100 ms gets nothing.
    const slow = request(`${sim.url}/municipios/DFe/0`, { dispatcher: sp, signal: AbortSignal.timeout(100) });
    await expect(slow).rejects.toMatchObject({ name: "TimeoutError" });
    sim.configure({ latencyMs: 0, error503Rate: 0.5 });
    const statuses = new Set<number>();
    for (let i = 0; i < 16; i++) statuses.add((await get(sp, "/municipios/DFe/0")).status);
    expect(statuses).toEqual(new Set([200, 503]));
    sim.configure({ error503Rate: 0, truncatedGzipRate: 1 });
    const page = (await get(sp, "/municipios/DFe/0")).json!.LoteDFe as { ArquivoXml: string }[];
    for (const item of page) expect(() => gunzipSync(Buffer.from(item.ArquivoXml, "base64"))).toThrow();
  });

  it("serves a note and its events by chave, the taxpayer feed, the convênio; refuses another CNPJ root; DANFSe is down", async () => {
    const log = sim.feed(SP.ibge);
    const note = log.entries.find(
      (e) => e.facts.kind === "NFSE" && log.entries.some((x) => x.chave === e.chave && x.facts.kind === "EVENTO"),
    )!;
    const res = await get(sp, `/municipios/NFSe/${note.chave}/Eventos`);
    expect(res.json!.LoteDFe[0].TipoDocumento).toBe("NFSE");
    expect(res.json!.LoteDFe.slice(1).every((i: { TipoDocumento: string }) => i.TipoDocumento === "EVENTO")).toBe(true);
    const own = await get(sp, `/contribuintes/DFe/0?cnpjConsulta=${SP.cnpj}`);
    expect(own.json!.LoteDFe).toHaveLength(50);
    const other = await get(sp, "/contribuintes/DFe/0?cnpjConsulta=99888777000100");
    expect(other.json!.Erros[0].Codigo).toBe("E2243");
    const convenio = await get(sp, `/parametrizacao/${SP.ibge}/convenio`);
    expect(convenio.json).toMatchObject({ parametrosConvenio: { aderenteAmbienteNacional: 1 } });
    expect((await get(sp, `/danfse/${note.chave}`)).status).toBe(503);
  });

  it("is switched and read through its admin endpoint", async () => {
    const set = await fetch(`${sim.adminUrl}/switches`, { method: "POST", body: JSON.stringify({ pageSize: 100 }) });
    expect(((await set.json()) as { pageSize: number }).pageSize).toBe(100);
    expect((await get(sp, "/municipios/DFe/0")).json!.LoteDFe).toHaveLength(100);
    const counters = (await (await fetch(`${sim.adminUrl}/counters`)).json()) as { byFeed: Record<string, { batch: number }> };
    expect(counters.byFeed[`${SP.ibge}/DISTRIBUICAO`]!.batch).toBe(1);
    const appended = await fetch(`${sim.adminUrl}/append`, {
      method: "POST",
      body: JSON.stringify({ ibge: SP.ibge, tipoNSU: "DISTRIBUICAO", count: 5 }),
    });
    expect(((await appended.json()) as { added: number }).added).toBe(5);
    const info = (await (await fetch(`${sim.adminUrl}/feeds/${SP.ibge}/DISTRIBUICAO`)).json()) as { size: number };
    expect(info.size).toBe(305);
  });
});

describe("generated data", () => {
  const gen = (seed: number) => new FeedGenerator({ seed, ibge: SP.ibge, tipoNsu: "DISTRIBUICAO", tpAmb: 2 }).next(600);

  it("is deterministic per seed", () => {
    expect(gen(9).map((e) => e.xml)).toEqual(gen(9).map((e) => e.xml));
    expect(gen(10).map((e) => e.xml)).not.toEqual(gen(9).map((e) => e.xml));
  });

  it("is realistic: valid chaves and CNPJ/CPF, every event code, both layouts, substitutions, odd orderings", () => {
    const entries = gen(11);
    const ids: TaxIdFacts[] = [];
    const codes = new Set<string>();
    let withoutTomador = 0;
    let late = 0;
    const noteNsu = new Map<string, bigint>();
    for (const e of entries) {
      expect(isValidChave(e.chave)).toBe(true);
      if (e.facts.kind === "NFSE") {
        const n = e.facts.note;
        noteNsu.set(n.chave, e.nsu);
        ids.push(n.emitente.doc, n.prestador.doc, ...(n.tomador ? [n.tomador.doc] : []), ...(n.intermediario ? [n.intermediario.doc] : []));
        if (!n.tomador) withoutTomador++;
        if (n.chSubstda) expect(isValidChave(n.chSubstda)).toBe(true);
        // Late notes: emitted months before they reached the ADN.
        if (Date.parse(`${e.dataHoraGeracao}-03:00`) - Date.parse(n.dhEmi) > 30 * 86_400_000) late++;
      } else {
        codes.add(e.facts.event.codigo);
        ids.push(e.facts.event.autor);
      }
    }
    for (const id of ids) expect(id.kind === "CNPJ" ? isValidCnpj(id.number) : isValidCpf(id.number)).toBe(true);
    expect([...codes].sort()).toEqual(EVENT_CODES.map((c) => c.codigo).sort());
    expect(withoutTomador).toBeGreaterThan(0);
    expect(late).toBeGreaterThan(0);
    const versions = new Set(entries.map((e) => (e.facts.kind === "NFSE" ? e.facts.note.versao : e.facts.event.versao)));
    expect(versions).toEqual(new Set(["1.00", "1.01"]));
    const substitutions = entries.filter((e) => e.facts.kind === "EVENTO" && e.facts.event.codigo === "105102");
    expect(substitutions.length).toBeGreaterThan(0);
    for (const s of substitutions) expect(s.facts.kind === "EVENTO" && noteNsu.has(s.facts.event.chSubstituta)).toBe(true);
    const eventFirst = entries.some((e) => e.facts.kind === "EVENTO" && (noteNsu.get(e.chave) ?? 0n) > e.nsu);
    expect(eventFirst).toBe(true);
    expect(entries.some((e) => e.hidden)).toBe(true);
  });
});

describe("the CLI", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "malha-adn-sim-cli-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts, prints its URLs and writes gateway credentials that the ADN accepts; stops on SIGTERM", async () => {
    const proc = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "tools/adn-sim/main.ts",
        "--port",
        "0",
        "--admin-port",
        "0",
        "--feed-size",
        "60",
        "--page-size",
        "100",
        "--municipios",
        "3550308",
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, ADN_SIM_CERTS_DIR: dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
    proc.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    const info = await new Promise<{ url: string; adminUrl: string; certsDir: string }>((resolve, reject) => {
      const timer = setInterval(() => {
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) {
          clearInterval(timer);
          resolve(JSON.parse(line));
        }
      }, 50);
      void exited.then(() => (clearInterval(timer), reject(new Error(out))));
    });
    expect(out).toContain("ADN_CREDENTIALS_DIR=");
    expect(info.certsDir).toBe(dir);
    const a = new Agent({
      connect: {
        ca: readFileSync(join(dir, "ca.pem")),
        cert: readFileSync(join(dir, "3550308.pem")),
        key: readFileSync(join(dir, "3550308.key")),
      },
    });
    agents.push(a);
    const res = await request(`${info.url}/municipios/DFe/0?tipoNSU=DISTRIBUICAO`, { dispatcher: a });
    const body = (await res.body.json()) as { LoteDFe: unknown[] };
    expect(res.statusCode).toBe(200);
    expect(body.LoteDFe.length).toBeGreaterThan(50);
    const counters = (await (await fetch(`${info.adminUrl}/counters`)).json()) as { total: number };
    expect(counters.total).toBe(1);
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
