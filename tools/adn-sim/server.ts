// The ADN simulator: a real HTTPS server with client-certificate authentication (test CA) that answers
// the municipal and taxpayer distribution APIs like the ADN does (adn.md §1–§3, §7.4), plus a plain-HTTP
// admin endpoint on loopback for switches and call counters.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { isChaveShaped } from "../../libs/adn/chave.js";
import { createAdminServer } from "./admin.js";
import { bump, emptyCounters, type SimCall, type SimCounters } from "./counters.js";
import { Feeds, type FeedLog } from "./feeds.js";
import { identify } from "./identity.js";
import type { FeedEntry } from "./model.js";
import { Rng, unit } from "./random.js";
import { envelope, erro, loteItem, sendHtml, sendJson } from "./responses.js";
import { DEFAULT_SWITCHES, type ItemFault, type SimSwitches } from "./switches.js";

export interface SimMunicipality {
  ibge: string;
  /** CNPJ of the municipality's e-CNPJ (the convênio registration). */
  cnpj: string;
}

export interface AdnSimulatorOptions {
  /** Server certificate (chain) and key, PEM. */
  serverCertPem: string;
  serverKeyPem: string;
  /** CA(s) whose client certificates are accepted, PEM. */
  clientCaPem: string;
  municipalities: SimMunicipality[];
  seed?: number;
  /** Entries generated per feed at first use (default 500). */
  feedSize?: number;
  switches?: Partial<SimSwitches>;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  adminPort?: number;
}

export interface AdnSimulator {
  /** Root URL ("https://127.0.0.1:PORT"); the APIs are under /municipios and /contribuintes. */
  readonly url: string;
  /** Admin root URL ("http://127.0.0.1:PORT/admin"). */
  readonly adminUrl: string;
  readonly switches: SimSwitches;
  configure(patch: Partial<SimSwitches>): SimSwitches;
  /** Switches back to their start values and counters to zero (data is kept). */
  reset(): void;
  counters(): SimCounters;
  /** The NSU log of a feed (generated on first use), the model tests compare against. */
  feed(ibge: string, tipoNsu?: string): FeedLog;
  close(): Promise<void>;
}

const TIPOS_NSU = ["DISTRIBUICAO", "RECEPCAO", "GERAL", "MEI"] as const;

export async function startAdnSimulator(opts: AdnSimulatorOptions): Promise<AdnSimulator> {
  const seed = opts.seed ?? 1;
  const initial: SimSwitches = { ...DEFAULT_SWITCHES, ...opts.switches };
  let switches: SimSwitches = structuredClone(initial);
  let counters = emptyCounters();
  const callRng = new Rng(seed ^ 0x5eed);
  const feeds = new Feeds({ seed, initialSize: opts.feedSize ?? 500, tpAmb: () => (switches.tipoAmbiente === "PRODUCAO" ? 1 : 2) });
  const byCnpj = new Map(opts.municipalities.map((m) => [m.cnpj, m]));
  const rateWindows = new Map<string, { start: number; calls: number }>();
  const open = new Set<ServerResponse>();
  const inFlight = new Map<string, number>();

  const itemFault = (feed: FeedLog, nsu: bigint): ItemFault | undefined => {
    const fixed = switches.faultsByNsu[String(nsu)];
    if (fixed) return fixed;
    const key = [feed.ibge, feed.tipoNsu, String(nsu)];
    if (unit(seed, "gz", ...key) < switches.truncatedGzipRate) return "truncated-gzip";
    if (unit(seed, "b64", ...key) < switches.badBase64Rate) return "bad-base64";
    if (unit(seed, "xml", ...key) < switches.malformedXmlRate) return "malformed-xml";
    return undefined;
  };

  const items = (feed: FeedLog, entries: FeedEntry[]) => {
    const out: object[] = [];
    for (const e of entries) {
      const item = loteItem(e, itemFault(feed, e.nsu), switches.bombBytes);
      out.push(item);
      if (switches.duplicateRate > 0 && unit(seed, "dup", feed.ibge, feed.tipoNsu, String(e.nsu)) < switches.duplicateRate) out.push(item);
    }
    return out;
  };

  // latencyMs is the time from a request's arrival to its answer, the page's rendering included, as a
  // client sees a real server: the answer is held until then (or goes when ready, if rendering took longer).
  const answerDue = new WeakMap<ServerResponse, number>();
  const untilDue = async (res: ServerResponse) => {
    const wait = (answerDue.get(res) ?? 0) - performance.now();
    if (wait > 0) await sleep(wait);
  };

  const logged = new WeakMap<ServerResponse, SimCall>();
  const answered = (res: ServerResponse, status: number) => {
    bump(counters.byStatus, String(status));
    const entry = logged.get(res);
    if (entry) entry.status = status;
  };

  const reply = async (res: ServerResponse, status: number, body: object) => {
    await untilDue(res);
    answered(res, status);
    if (switches.cutNext > 0) {
      switches.cutNext--;
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
      res.write(text.slice(0, text.length >> 1), () => res.destroy());
      return;
    }
    sendJson(res, status, body);
  };
  const html = async (res: ServerResponse, status: number, title: string, text: string) => {
    await untilDue(res);
    answered(res, status);
    sendHtml(res, status, title, text);
  };
  const rejeicao = (res: ServerResponse, codigo: string, descricao: string) =>
    reply(res, 400, envelope("REJEICAO", switches.tipoAmbiente, [], [erro(codigo, descricao)]));
  const nenhum = (res: ServerResponse, codigo: string, descricao: string) =>
    reply(res, 404, envelope("NENHUM_DOCUMENTO_LOCALIZADO", switches.tipoAmbiente, [], [erro(codigo, descricao)]));

  const serveDfe = (
    res: ServerResponse,
    feed: FeedLog,
    nsu: bigint,
    lote: boolean,
    codes: { fromNsu: string; atNsu: string },
    counterKey: string,
  ) => {
    const counter = (counters.byFeed[counterKey] ??= { batch: 0, single: 0 });
    if (!lote) {
      counter.single++;
      const entry = feed.at(nsu);
      if (!entry) return nenhum(res, codes.atNsu, "Nenhum documento localizado para o NSU informado.");
      return reply(res, 200, envelope("DOCUMENTOS_LOCALIZADOS", switches.tipoAmbiente, items(feed, [entry])));
    }
    counter.batch++;
    if (switches.appendEvery && counter.batch % switches.appendEvery.calls === 0) feed.append(switches.appendEvery.count);
    const page: FeedEntry[] = [];
    const from = feed.firstIndexFrom(switches.startInclusive ? nsu : nsu + 1n);
    for (let i = from; i < feed.entries.length && page.length < switches.pageSize; i++) {
      const e = feed.entries[i]!;
      if (!e.hidden) page.push(e);
    }
    if (page.length === 0) {
      return nenhum(res, codes.fromNsu, "Nenhum documento localizado - não existem documentos fiscais a partir do NSU informado.");
    }
    return reply(res, 200, envelope("DOCUMENTOS_LOCALIZADOS", switches.tipoAmbiente, items(feed, page)));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "https://adn.invalid");
    const who = identify(req.socket as TLSSocket);
    const municipality = who.ok ? byCnpj.get(who.cnpj) : undefined;
    counters.total++;
    const entry: SimCall = { at: Date.now(), cnpj: who.ok ? who.cnpj : "none", path: url.pathname + url.search, status: 0 };
    // Bounded for long benchmarks: the oldest half goes when it is full.
    if (counters.log.length >= 200_000) counters.log.splice(0, 100_000);
    counters.log.push(entry);
    logged.set(res, entry);
    bump(counters.byCnpj, who.ok ? who.cnpj : "none");
    if (municipality) bump(counters.byMunicipio, municipality.ibge);
    if (municipality && /^\/municipios\/dfe\//i.test(url.pathname)) {
      const feedKey = `${municipality.ibge}/${(url.searchParams.get("tipoNSU") ?? "DISTRIBUICAO").toUpperCase()}`;
      const now = (inFlight.get(feedKey) ?? 0) + 1;
      inFlight.set(feedKey, now);
      counters.maxConcurrentByFeed[feedKey] = Math.max(counters.maxConcurrentByFeed[feedKey] ?? 0, now);
      res.once("close", () => inFlight.set(feedKey, (inFlight.get(feedKey) ?? 1) - 1));
    }

    if (switches.latencyMs > 0) {
      // The spread is not part of the data model, so it does not draw from the seeded generators.
      const jitter = switches.latencyJitterMs > 0 ? (Math.random() * 2 - 1) * switches.latencyJitterMs : 0;
      answerDue.set(res, performance.now() + Math.max(0, switches.latencyMs + jitter));
    }
    if (switches.hangNext > 0 || (switches.hangRate > 0 && callRng.next() < switches.hangRate)) {
      if (switches.hangNext > 0) switches.hangNext--;
      // Hold the request until the client gives up (or hangMs); then cut it without an answer.
      await untilDue(res);
      await Promise.race([sleep(switches.hangMs), new Promise((r) => res.once("close", r))]);
      res.destroy();
      return;
    }
    if (switches.fail503Next > 0 || (switches.error503Rate > 0 && callRng.next() < switches.error503Rate)) {
      if (switches.fail503Next > 0) switches.fail503Next--;
      return html(res, 503, "503 Service Unavailable", "No server is available to handle this request.");
    }
    if (req.method !== "GET") return html(res, 405, "405 Method Not Allowed", "The requested resource does not support http method.");
    if (!who.ok) return rejeicao(res, who.codigo, who.descricao);
    if (switches.rateLimit) {
      const now = Date.now();
      const w = rateWindows.get(who.cnpj);
      if (!w || now - w.start >= switches.rateLimit.windowMs) rateWindows.set(who.cnpj, { start: now, calls: 1 });
      else if (++w.calls > switches.rateLimit.maxCalls) return html(res, 429, "429 Too Many Requests", "Too many requests.");
    }

    // Path casing varies among clients (/DFe/ vs /dfe/): match case-insensitively.
    const path = url.pathname.replace(/\/+$/, "");
    const convenio = /^\/parametrizacao\/(\d{7})\/convenio$/i.exec(path);
    if (convenio) {
      // Parametrização speaks camelCase, unlike the distribution APIs (adn.md §3).
      const known = opts.municipalities.some((m) => m.ibge === convenio[1]);
      return reply(res, 200, {
        mensagem: known ? null : "Município sem convênio",
        parametrosConvenio: {
          tipoConvenio: known ? 1 : 0,
          aderenteAmbienteNacional: known ? 1 : -1,
          aderenteEmissorNacional: known ? 1 : -1,
          situacaoEmissaoPadraoContribuintesRFB: 0,
          aderenteMAN: 0,
          permiteAproveitametoDeCreditos: false,
        },
      });
    }
    // DANFSe is reported unavailable in production; nothing may depend on it.
    if (/^\/danfse\//i.test(path)) return html(res, 503, "503 Service Unavailable", "No server is available to handle this request.");
    const dfe = /^\/(municipios|contribuintes)\/dfe\/([^/]+)$/i.exec(path);
    const eventos = /^\/(municipios|contribuintes)\/nfse\/([^/]+)\/eventos$/i.exec(path);
    const api = (dfe ?? eventos)?.[1]?.toLowerCase();
    if (!api) return html(res, 404, "404 Not Found", "The resource you are looking for has been removed or is temporarily unavailable.");
    if (api === "municipios" && !municipality) {
      return rejeicao(res, "E2001", "CNPJ do certificado não cadastrado para nenhum município conveniado.");
    }
    const lote = (url.searchParams.get("lote") ?? "true").toLowerCase() !== "false";

    if (dfe) {
      const nsuText = dfe[2]!;
      if (!/^\d{1,19}$/.test(nsuText)) return rejeicao(res, "E2010", "NSU informado inválido.");
      const nsu = BigInt(nsuText);
      if (api === "municipios") {
        const tipo = (url.searchParams.get("tipoNSU") ?? "DISTRIBUICAO").toUpperCase();
        if (!(TIPOS_NSU as readonly string[]).includes(tipo)) return rejeicao(res, "E2011", "tipoNSU informado inválido.");
        if (tipo === "GERAL") return rejeicao(res, "E2301", "Consulta ao NSU geral permitida apenas a órgãos cadastrados.");
        const feed = feeds.get(municipality!.ibge, tipo);
        return serveDfe(res, feed, nsu, lote, { fromNsu: "E2020", atNsu: "E2040" }, `${municipality!.ibge}/${tipo}`);
      }
      const consulta = url.searchParams.get("cnpjConsulta") ?? who.cnpj;
      if (consulta.slice(0, 8) !== who.cnpj.slice(0, 8))
        return rejeicao(res, "E2243", "CNPJ consultado não pertence à raiz do certificado.");
      return serveDfe(
        res,
        feeds.get(consulta, "CONTRIBUINTE"),
        nsu,
        lote,
        { fromNsu: "E2220", atNsu: "E2230" },
        `${consulta}/CONTRIBUINTE`,
      );
    }

    const chave = eventos![2]!;
    if (!isChaveShaped(chave)) return rejeicao(res, "E2050", "Chave de acesso informada inválida.");
    const owner = municipality?.ibge ?? who.cnpj;
    bump(counters.eventos, owner);
    const mine = api === "municipios" ? feeds.all().filter((f) => f.ibge === owner) : [feeds.get(who.cnpj, "CONTRIBUINTE")];
    const seen = new Set<string>();
    const found: { feed: FeedLog; entry: FeedEntry }[] = [];
    for (const feed of mine) {
      for (const entry of feed.entries) {
        if (entry.chave !== chave) continue;
        const id = entry.facts.kind === "NFSE" ? `NFS${chave}` : entry.facts.event.id;
        if (seen.has(id)) continue;
        seen.add(id);
        found.push({ feed, entry });
      }
    }
    if (found.length === 0) {
      const elsewhere = feeds.all().some((f) => f.ibge !== owner && f.entries.some((e) => e.chave === chave));
      if (elsewhere) return rejeicao(res, "E2061", "Chave de acesso não referencia o município do certificado.");
      return nenhum(res, "E2060", "Nenhum documento localizado para a chave de acesso informada.");
    }
    found.sort((a, b) => (a.entry.facts.kind === b.entry.facts.kind ? 0 : a.entry.facts.kind === "NFSE" ? -1 : 1));
    const body = found.map(({ feed, entry }) => loteItem(entry, itemFault(feed, entry.nsu), switches.bombBytes));
    return reply(res, 200, envelope("DOCUMENTOS_LOCALIZADOS", switches.tipoAmbiente, body));
  };

  const server = createHttpsServer(
    {
      cert: opts.serverCertPem,
      key: opts.serverKeyPem,
      ca: opts.clientCaPem,
      // The ADN checks the certificate at the HTTP layer and answers its own JSON codes (E1203, E2001…),
      // so the handshake asks for a certificate but does not abort without a valid one.
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: "TLSv1.2",
    },
    (req, res) => {
      open.add(res);
      res.once("close", () => open.delete(res));
      handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) html(res, 500, "500 Internal Server Error", String((err as Error).message));
      });
    },
  );
  await listen(server, opts.port ?? 0, opts.host ?? "127.0.0.1");
  const port = (server.address() as AddressInfo).port;

  const sim: AdnSimulator = {
    url: `https://127.0.0.1:${port}`,
    adminUrl: "",
    get switches() {
      return switches;
    },
    configure(patch) {
      switches = { ...switches, ...patch };
      return switches;
    },
    reset() {
      switches = structuredClone(initial);
      counters = emptyCounters();
      rateWindows.clear();
    },
    counters: () => structuredClone(counters),
    feed: (ibge, tipoNsu = "DISTRIBUICAO") => feeds.get(ibge, tipoNsu),
    async close() {
      for (const res of open) res.destroy();
      await Promise.all([close(server), close(admin)]);
    },
  };
  const admin = createAdminServer(sim);
  await listen(admin, opts.adminPort ?? 0, "127.0.0.1");
  Object.assign(sim, { adminUrl: `http://127.0.0.1:${(admin.address() as AddressInfo).port}/admin` });
  return sim;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
