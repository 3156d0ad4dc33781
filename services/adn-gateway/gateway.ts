// The gateway's core: per call, the cool-down check, the municipality's credentials and pool, then one
// logical ADN call. Handlers only validate requests and shape responses.
import { Code, ConnectError } from "@connectrpc/connect";
import type { AdnEnvelope } from "../../libs/adn/envelope.js";
import type { AdnHttpClient } from "../../libs/adn/http.js";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { Ambiente } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { callAdn, type AdnCallDeps } from "./adn-call.js";
import type { GatewayConfig } from "./config.js";
import type { Cooldowns } from "./cooldown.js";
import { CredentialsUnavailableError, type CredentialSource } from "./credentials.js";
import { credentialsUnavailable, rateLimited } from "./errors.js";
import type { AdnMetrics } from "./metrics.js";

export interface GatewayDeps {
  config: GatewayConfig;
  credentials: CredentialSource;
  http: AdnHttpClient;
  cooldowns: Cooldowns;
  metrics: AdnMetrics;
  log: Logger;
  now?: () => number;
}

export interface AdnExchange {
  envelope: AdnEnvelope;
  httpStatus: number;
  attempts: number;
  elapsedMs: number;
}

export class AdnGateway {
  private readonly now: () => number;
  private readonly callDeps: AdnCallDeps;

  constructor(private readonly deps: GatewayDeps) {
    this.now = deps.now ?? Date.now;
    this.callDeps = {
      http: deps.http,
      timeoutMs: deps.config.requestTimeoutMs,
      maxRetries: deps.config.maxRetries,
      backoff: { baseMs: deps.config.backoffBaseMs, maxMs: deps.config.backoffMaxMs },
      metrics: deps.metrics,
    };
  }

  baseUrl(ambiente: Ambiente): string {
    return ambiente === Ambiente.PRODUCAO ? this.deps.config.baseUrlProducao : this.deps.config.baseUrlProducaoRestrita;
  }

  get decodeOptions() {
    return { maxDecompressedBytes: this.deps.config.maxDecompressedBytes };
  }

  get maxBatchBytes(): number {
    return this.deps.config.maxBatchBytes;
  }

  /** One logical call to `url` with the municipality's certificate. */
  async exchange(ibge: string, ambiente: Ambiente, url: string, endpoint: string, signal?: AbortSignal): Promise<AdnExchange> {
    const key = `${ibge}/${ambiente}`;
    const started = this.now();
    const cooling = this.deps.cooldowns.current(key, started);
    if (cooling) throw rateLimited(cooling, true);
    const creds = await this.credentials(ibge, signal);
    const pool = this.deps.http.pool(ibge, creds.version, creds);
    const result = await callAdn(this.callDeps, pool, url, endpoint, signal);
    if (result.kind === "rate-limited") {
      const cooldown = this.deps.cooldowns.record(key, this.now());
      this.deps.log.warn(
        { ibge, ambiente, cooldownUntil: new Date(cooldown.until).toISOString() },
        "ADN rate limit (HTTP 429): cool-down started",
      );
      throw rateLimited(cooldown, false);
    }
    return { envelope: result.envelope, httpStatus: result.httpStatus, attempts: result.attempts, elapsedMs: this.now() - started };
  }

  private async credentials(ibge: string, signal?: AbortSignal) {
    let creds;
    try {
      creds = await this.deps.credentials.get(ibge, signal);
    } catch (err) {
      if (err instanceof CredentialsUnavailableError) throw credentialsUnavailable(err.problem, err.message, err.certificateId);
      if (err instanceof ConnectError) throw err;
      throw new ConnectError(`credential source failed: ${(err as Error).message}`, Code.Unavailable);
    }
    // The ADN would answer E1203; refusing here spares a call that cannot succeed.
    if (creds.notAfter.getTime() <= this.now()) {
      throw credentialsUnavailable(
        CredentialsProblem.EXPIRED,
        `the certificate of municipality ${ibge} expired at ${creds.notAfter.toISOString()}; not calling the ADN with it`,
        creds.certificateId,
      );
    }
    return creds;
  }
}
