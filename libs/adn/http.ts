// HTTP to the ADN: undici, HTTP/1.1 only (Sefin answers RST_STREAM to h2 and the ADN sits behind the same
// front), `Accept: application/json`, a few connections per client certificate (closed once idle), a
// hard cap on the body size and one overall deadline per attempt.
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls";
import { buildConnector, Client, request } from "undici";
import { runDetached } from "../rpc/context.js";
import { inSpan, SpanKind } from "../tracing/spans.js";
import { withoutPeerCertificate } from "./tls-session.js";

export interface ClientCredentials {
  /** Private key, PEM. Kept in memory only. */
  privateKeyPem: string;
  /** Leaf certificate followed by its intermediates, PEM. */
  certificateChainPem: string;
}

export interface AdnHttpResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

export type AdnHttpFailureKind = "timeout" | "network" | "too-large";

/** A failed attempt that got no usable response. */
export class AdnHttpFailure extends Error {
  override name = "AdnHttpFailure";
  constructor(
    readonly kind: AdnHttpFailureKind,
    message: string,
  ) {
    super(message);
  }
}

export interface AdnHttpOptions {
  /**
   * The CAs trusted for the ADN instead of Node's bundle (e.g. the simulator's test CA). Unset: Node's
   * bundle, plus whatever NODE_EXTRA_CA_CERTS adds to it. Not "bundle + file": every TLS context would
   * then carry its own parsed copy of the whole bundle, ≈ 1 MB per certificate (decision 0024).
   */
  trustedCa?: Buffer;
  maxResponseBytes: number;
  /** Connections per origin and certificate. */
  connections?: number;
  /** A certificate's pool unused for this long is closed; 0 keeps pools for good. */
  idlePoolMs?: number;
  /**
   * TLS contexts kept past their pool's closing, one per certificate used in the last two hours; the
   * least recently used goes first past this many. 0 builds a context each time a pool opens (decision 0050).
   */
  maxTlsContexts?: number;
}

/**
 * How long a certificate's last TLS session is kept for resumption after the call that got it: past a
 * feed's next run under the one-hour rule. The server's ticket lifetime still decides; OpenSSL does not
 * offer a session past it (decision 0029).
 */
export const TLS_SESSION_KEEP_MS = 2 * 3_600_000;

/** TLSSocket's `setSession`: what tls.connect itself calls, not in Node's typings. */
type SessionSettable = TLSSocket & { setSession(session: Buffer): void };
const socketSetsSession = typeof (TLSSocket.prototype as Partial<SessionSettable>).setSession === "function";

/** Contexts kept by default: every municipality of Brazil has one certificate, ≈ 28 KB of native memory each. */
export const DEFAULT_MAX_TLS_CONTEXTS = 6_000;

/** A certificate's connections, as `pool` hands them out: what `get` sends through. */
export interface CertificatePool {
  readonly ibge: string;
}

/** One connection of a certificate's pool (an undici Client: one socket, reopened when it closed) and its calls. */
interface Connection {
  client: Client;
  inFlight: number;
}

interface PoolEntry extends CertificatePool {
  poolKey: string;
  creds: ClientCredentials;
  secureContext: SecureContext;
  /** By origin: a Client speaks to one. */
  connections: Map<string, Connection[]>;
  lastUsedMs: number;
  inFlight: number;
  /** Closed for idleness: a later attempt through it goes through a fresh pool (decision 0037). */
  idleClosed: boolean;
  /** Closed because its credentials were replaced, or the client closed: never reopened. */
  closed: boolean;
}

/**
 * What an idle pool's connections are destroyed with: none has a call in flight, so no caller sees it. One
 * error built at load, rather than undici's ClientDestroyedError (stack trace included) per close (0066).
 */
const IDLE_POOL_CLOSED = new Error("the certificate's pool closed for idleness");

/** Drops the entries of a map kept in order of last use that are older than `cutoffMs`, oldest first. */
function forgetOlder(kept: Map<string, { atMs: number }>, cutoffMs: number): void {
  for (const [key, entry] of kept) {
    if (entry.atMs >= cutoffMs) break;
    kept.delete(key);
  }
}

export class AdnHttpClient {
  /**
   * The open pool of each municipality: one at a time, for its current credentials. Keyed by municipality,
   * so a run's look-ups cost the same with 5,570 certificates as with one.
   */
  private readonly pools = new Map<string, PoolEntry>();
  /**
   * The last TLS session of each municipality's certificate, for the pool key it came from, kept across its
   * pool's closing (decision 0029). In the order the sessions arrived (a newer one is moved to the end), so
   * forgetting the old ones stops at the first one still young.
   */
  private readonly tlsSessions = new Map<string, { poolKey: string; session: Buffer; atMs: number }>();
  /**
   * Each municipality's TLS context for its current credentials, kept across its pool's closing: under the
   * one-hour rule a pool opens once per run, and building the context (parsing the key and the chain) was
   * the gateway's largest cost in a sweep (decision 0050). In the order of last use, like the sessions.
   */
  private readonly tlsContexts = new Map<string, { poolKey: string; context: SecureContext; atMs: number }>();
  private readonly maxTlsContexts: number;
  private contextsBuilt = 0;
  private readonly ca: string | undefined;
  private readonly idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: AdnHttpOptions) {
    this.ca = opts.trustedCa?.toString("utf8");
    this.maxTlsContexts = opts.maxTlsContexts ?? DEFAULT_MAX_TLS_CONTEXTS;
    const idleMs = opts.idlePoolMs ?? 0;
    if (idleMs > 0) {
      // Checked at a quarter of the limit, so a pool lives at most 1.25 × the limit after its last call.
      this.idleTimer = setInterval(() => this.closeIdle(Date.now() - idleMs), Math.max(250, idleMs / 4));
      this.idleTimer.unref();
    }
  }

  /** Pools currently open (one per certificate in use). */
  poolCount(): number {
    return this.pools.size;
  }

  /** TLS sessions currently kept (at most one per certificate). */
  tlsSessionCount(): number {
    return this.tlsSessions.size;
  }

  /** TLS contexts currently kept (at most one per certificate, at most `maxTlsContexts`). */
  tlsContextCount(): number {
    return this.tlsContexts.size;
  }

  /** TLS contexts built since start: one per pool opened when none was kept for its credentials. */
  tlsContextsBuilt(): number {
    return this.contextsBuilt;
  }

  /** Closes the pools last used before `cutoffMs` that have no request in flight; forgets old TLS sessions and contexts. */
  closeIdle(cutoffMs: number): void {
    for (const entry of this.pools.values()) {
      if (entry.inFlight === 0 && entry.lastUsedMs < cutoffMs) {
        entry.idleClosed = true;
        this.drop(entry);
      }
    }
    const keptCutoff = Date.now() - TLS_SESSION_KEEP_MS;
    forgetOlder(this.tlsSessions, keptCutoff);
    forgetOlder(this.tlsContexts, keptCutoff);
  }

  /** Closes the pool's connections: at once when idle, after their calls otherwise (replaced credentials). */
  private drop(entry: PoolEntry): void {
    if (this.pools.get(entry.ibge) === entry) this.pools.delete(entry.ibge);
    const idle = entry.inFlight === 0;
    for (const list of entry.connections.values()) {
      for (const c of list) {
        const closing = idle ? c.client.destroy(IDLE_POOL_CLOSED) : c.client.close();
        void closing.catch(() => undefined);
      }
    }
    entry.connections.clear();
  }

  /**
   * The pool for a certificate, created on first use. `poolKey` changes whenever the credentials do
   * (the vault's version): pools of replaced credentials are closed gracefully.
   */
  pool(ibge: string, poolKey: string, creds: ClientCredentials): CertificatePool {
    const existing = this.pools.get(ibge);
    if (existing?.poolKey === poolKey) {
      existing.lastUsedMs = Date.now();
      return existing;
    }
    // The municipality's credentials were replaced: its old pool closes, and a session resumed with the
    // new credentials would still present the old certificate, so it is forgotten.
    if (existing) {
      existing.closed = true;
      this.drop(existing);
    }
    if (this.tlsSessions.get(ibge)?.poolKey !== poolKey) this.tlsSessions.delete(ibge);
    const entry: PoolEntry = {
      ibge,
      poolKey,
      creds,
      secureContext: this.contextFor(ibge, poolKey, creds),
      connections: new Map(),
      lastUsedMs: Date.now(),
      inFlight: 0,
      idleClosed: false,
      closed: false,
    };
    this.pools.set(ibge, entry);
    return entry;
  }

  /**
   * A connection of the pool to the URL's origin: one without a call, else a new one while fewer than
   * `connections` exist, else the least busy (its Client queues the call). Clients rather than undici's
   * Agent and Pool: a sweep opens a certificate's pool once per run, and the Agent → Pool → Client chain
   * cost the gateway more than the call's own HTTP work (decision 0066).
   */
  private connectionFor(entry: PoolEntry, origin: string): Connection {
    let list = entry.connections.get(origin);
    if (!list) {
      list = [];
      entry.connections.set(origin, list);
    }
    let least: Connection | undefined;
    for (const c of list) {
      if (c.inFlight === 0) return c;
      if (!least || c.inFlight < least.inFlight) least = c;
    }
    if (least && list.length >= (this.opts.connections ?? 4)) return least;
    const { ibge, poolKey, secureContext } = entry;
    const client = new Client(origin, {
      allowH2: false,
      connect: (options, callback) => this.connect(ibge, poolKey, secureContext, options, callback),
    });
    const made: Connection = { client, inFlight: 0 };
    list.push(made);
    return made;
  }

  /**
   * The certificate's TLS context: the one kept for these credentials, or a new one. One context per
   * certificate, shared by its pool's connections: built from options, every new connection would parse
   * the key, the chain and (with an extra CA) the whole trust bundle again. Without `ca` the context shares
   * Node's root store.
   */
  private contextFor(ibge: string, poolKey: string, creds: ClientCredentials): SecureContext {
    const kept = this.tlsContexts.get(ibge);
    this.tlsContexts.delete(ibge);
    // Replaced credentials get a new context; the old one is dropped with its entry.
    let context = kept?.poolKey === poolKey ? kept.context : undefined;
    if (!context) {
      context = createSecureContext({ key: creds.privateKeyPem, cert: creds.certificateChainPem, ...(this.ca ? { ca: this.ca } : {}) });
      this.contextsBuilt++;
    }
    if (this.maxTlsContexts > 0) {
      this.tlsContexts.set(ibge, { poolKey, context, atMs: Date.now() });
      for (const oldest of this.tlsContexts.keys()) {
        if (this.tlsContexts.size <= this.maxTlsContexts) break;
        this.tlsContexts.delete(oldest);
      }
    }
    return context;
  }

  /**
   * A new connection of a certificate's pool, offering the certificate's last TLS session. undici's own
   * session cache holds sessions through WeakRefs only: the first garbage collection after a call drops
   * it, so a feed's next run (an hour later under the one-hour rule) paid a full handshake with the
   * client certificate on both sides (decision 0029).
   */
  private connect(
    ibge: string,
    poolKey: string,
    secureContext: SecureContext,
    options: buildConnector.Options,
    callback: buildConnector.Callback,
  ): void {
    const found = this.tlsSessions.get(ibge);
    const kept = found?.poolKey === poolKey ? found : undefined;
    // The session is offered on the socket rather than as tls.connect's `session` option where Node lets
    // us: Node 20's tls.connect applies that option twice (in the socket's constructor and again before
    // returning), and each time parses the session and the server certificate in it (decision 0051).
    const viaOption = kept && !socketSetsSession;
    const connector = buildConnector({
      secureContext,
      rejectUnauthorized: true,
      maxCachedSessions: 0,
      ...(viaOption ? { session: kept.session } : {}),
    });
    // undici's connector returns the socket it opens (its type says void): the session arrives on it,
    // in TLS 1.3 after the handshake.
    const socket: unknown = connector(options, callback);
    if (socket instanceof TLSSocket) {
      // The handshake starts once the TCP connection is up, after this line.
      if (kept && !viaOption) (socket as SessionSettable).setSession(kept.session);
      socket.on("session", (session: Buffer) => {
        // A connection of replaced credentials still open must not bring their session back.
        const current = this.pools.get(ibge);
        if (current && current.poolKey !== poolKey) return;
        this.tlsSessions.delete(ibge);
        // Kept without the server's certificate, which offering it again would parse for nothing (0062).
        this.tlsSessions.set(ibge, { poolKey, session: withoutPeerCertificate(session), atMs: Date.now() });
      });
    }
  }

  /**
   * One GET in a CLIENT span (no trace header goes to the ADN: it is not ours); throws AdnHttpFailure
   * for timeouts and network errors, rethrows the caller's abort.
   */
  async get(given: CertificatePool, url: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<AdnHttpResponse> {
    const { pathname: path, origin } = new URL(url);
    const entry = this.live(given as PoolEntry);
    return inSpan(
      `GET ${path.replace(/\/\d+/g, "/{n}").replace(/\/[0-9A-Za-z]{50}\b/g, "/{chave}")}`,
      { kind: SpanKind.CLIENT, attributes: { "http.request.method": "GET", "url.full": url } },
      async (span) => {
        if (entry.closed) throw new AdnHttpFailure("network", "the certificate's pool was closed: its credentials were replaced");
        const connection = this.connectionFor(entry, origin);
        entry.inFlight++;
        connection.inFlight++;
        try {
          const res = await this.fetch(connection.client, url, opts);
          span.setAttribute("http.response.status_code", res.status);
          return res;
        } finally {
          connection.inFlight--;
          entry.inFlight--;
          entry.lastUsedMs = Date.now();
        }
      },
    );
  }

  /**
   * The pool to send through: `given`, or, when it was closed for idleness since the caller got it
   * (between two attempts of one call, a retry's back-off being longer than the idle limit), the
   * certificate's pool opened again — so the idle limit may be shorter than any back-off (decision 0037).
   * A pool closed because its credentials were replaced is not reopened: a call through it fails.
   */
  private live(entry: PoolEntry): PoolEntry {
    if (!entry.idleClosed || entry.closed) return entry;
    const current = this.pools.get(entry.ibge);
    if (current && current.poolKey !== entry.poolKey) {
      entry.closed = true;
      return entry;
    }
    return this.pool(entry.ibge, entry.poolKey, entry.creds) as PoolEntry;
  }

  private async fetch(connection: Client, url: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<AdnHttpResponse> {
    // A timer cleared when the attempt ends, not AbortSignal.timeout: that one's timer stays armed for the
    // whole timeout, and a timer keeps the request scope it was created in (AsyncLocalStorage) reachable,
    // so every finished call's request graph — its aborted signal's stack holds the server stream —
    // stayed in memory for the timeout (60 s by default) after it ended (decision 0030).
    // One controller for both ends of an attempt, the deadline and the caller's abort, rather than
    // AbortSignal.any: Node 20's `any` ties the signals through weak references and a finalization
    // registry, collector work on every call (decision 0051).
    const attempt = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      attempt.abort();
    }, opts.timeoutMs);
    const caller = opts.signal;
    const callerAborted = () => attempt.abort(caller?.reason);
    if (caller?.aborted) callerAborted();
    else caller?.addEventListener("abort", callerAborted, { once: true });
    const signal = attempt.signal;
    try {
      // Outside the request scope: the sockets and timers undici creates for a call would otherwise hold
      // the scope of the request that happened to open them for as long as they live (0030).
      const res = await runDetached(() =>
        request(url, {
          dispatcher: connection,
          method: "GET",
          headers: { accept: "application/json" },
          signal,
        }),
      );
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.opts.maxResponseBytes) {
          res.body.destroy();
          throw new AdnHttpFailure("too-large", `response body exceeds ${this.opts.maxResponseBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      // undici gives the connection back to its pool a turn of the event loop after the body's end: a call
      // sent at once (DeliverFeeds asks for the next page as soon as it has read one) found it busy and
      // opened a second connection, with a TLS handshake of its own, on every run. One turn lets it reuse it.
      await new Promise((resolve) => setImmediate(resolve));
      const ct = res.headers["content-type"];
      return { status: res.statusCode, contentType: Array.isArray(ct) ? (ct[0] ?? "") : (ct ?? ""), body: Buffer.concat(chunks) };
    } catch (err) {
      if (err instanceof AdnHttpFailure) throw err;
      if (caller?.aborted) throw err;
      if (timedOut) throw new AdnHttpFailure("timeout", `timeout after ${opts.timeoutMs / 1000}s`);
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      throw new AdnHttpFailure("network", e.code ?? e.cause?.code ?? e.message);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener("abort", callerAborted);
    }
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    const clients = [...this.pools.values()].flatMap((e) => {
      e.closed = true;
      return [...e.connections.values()].flat().map((c) => c.client);
    });
    this.pools.clear();
    this.tlsSessions.clear();
    this.tlsContexts.clear();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  }
}

/** Query value of each tipoNSU series. */
export type TipoNsuParam = "DISTRIBUICAO" | "RECEPCAO" | "GERAL" | "MEI";

/** `GET {base}/municipios/DFe/{nsu}?tipoNSU=…&lote=…` (the OAS casing). */
export function municipiosDfeUrl(baseUrl: string, nsu: bigint, tipoNsu: TipoNsuParam, lote: boolean): string {
  return `${trimSlash(baseUrl)}/municipios/DFe/${nsu}?tipoNSU=${tipoNsu}&lote=${lote}`;
}

/** `GET {base}/municipios/NFSe/{chave}/Eventos`. */
export function municipiosEventosUrl(baseUrl: string, chave: string): string {
  return `${trimSlash(baseUrl)}/municipios/NFSe/${chave}/Eventos`;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
