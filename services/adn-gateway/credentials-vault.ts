// Production source: the vault's GetClientCredentials, cached in memory per municipality and re-checked
// with `known_version` once the cached copy is older than the refresh interval (an unchanged answer
// carries no key material).
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { CredentialsProblem } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { GetClientCredentialsRequestSchema, type VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import type { ServiceClient } from "../../libs/rpc/client.js";
import { CredentialsUnavailableError, presentedChain, type CredentialSet, type CredentialSource } from "./credentials.js";

/** Header the vault checks when the mesh runs without TLS (its mTLS identity check replaces it). */
export const VAULT_SECRET_HEADER = "x-malha-vault-secret";

interface Cached {
  set: CredentialSet;
  checkedAt: number;
}

export class VaultCredentialSource implements CredentialSource {
  readonly description: string;
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<CredentialSet>>();

  constructor(
    private readonly vault: ServiceClient<typeof VaultService>,
    private readonly opts: { secret?: string; refreshMs: number; url: string; now?: () => number },
  ) {
    this.description = `vault at ${opts.url}${opts.secret ? " (shared secret)" : ""}`;
  }

  get(ibge: string, signal?: AbortSignal): Promise<CredentialSet> {
    const now = (this.opts.now ?? Date.now)();
    const cached = this.cache.get(ibge);
    if (cached && now - cached.checkedAt < this.opts.refreshMs) return Promise.resolve(cached.set);
    let pending = this.inflight.get(ibge);
    if (!pending) {
      pending = this.fetch(ibge, cached, signal).finally(() => this.inflight.delete(ibge));
      this.inflight.set(ibge, pending);
    }
    return pending;
  }

  private async fetch(ibge: string, cached: Cached | undefined, signal?: AbortSignal): Promise<CredentialSet> {
    const request = create(GetClientCredentialsRequestSchema, { ibge, knownVersion: cached?.set.version ?? "" });
    let res;
    try {
      res = await this.vault.client.getClientCredentials(request, {
        ...(this.opts.secret ? { headers: { [VAULT_SECRET_HEADER]: this.opts.secret } } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      // A municipality without a usable certificate must not keep a stale one alive in the cache.
      if (isCredentialProblem(err)) this.cache.delete(ibge);
      if (signal?.aborted) throw err;
      throw mapVaultError(err, ibge);
    }
    const now = (this.opts.now ?? Date.now)();
    if (res.unchanged && cached && res.version === cached.set.version) {
      cached.checkedAt = now;
      return cached.set;
    }
    if (res.unchanged || !res.privateKeyPem || !res.certificateChainPem) {
      // "unchanged" for a version we no longer hold: ask again without one.
      this.cache.delete(ibge);
      if (cached) return this.fetch(ibge, undefined, signal);
      throw new ConnectError(`vault answered without credentials for municipality ${ibge}`, Code.Unavailable);
    }
    const set: CredentialSet = {
      version: res.version,
      certificateId: res.certificateId,
      notAfter: res.notAfter ? timestampDate(res.notAfter) : new Date(0),
      cnpj: res.cnpj,
      privateKeyPem: res.privateKeyPem,
      certificateChainPem: presentedChain(res.certificateChainPem),
    };
    this.cache.set(ibge, { set, checkedAt: now });
    return set;
  }

  close(): void {
    this.cache.clear();
    this.vault.close();
  }
}

function isCredentialProblem(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.NotFound || code === Code.FailedPrecondition || code === Code.DataLoss;
}

/** vault.proto, GetClientCredentials: the reasons of the vault's ErrorInfo (domain "malha.vault"). */
const VAULT_REASONS: Record<string, CredentialsProblem> = {
  NO_ACTIVE_CERTIFICATE: CredentialsProblem.NO_ACTIVE_CERTIFICATE,
  CERTIFICATE_EXPIRED: CredentialsProblem.EXPIRED,
  MASTER_KEY_NOT_CONFIGURED: CredentialsProblem.UNDECRYPTABLE,
  CIPHERTEXT_TAMPERED: CredentialsProblem.UNDECRYPTABLE,
};

function problemMessage(problem: CredentialsProblem, ibge: string, vaultMessage: string): string {
  if (problem === CredentialsProblem.NO_ACTIVE_CERTIFICATE) return `municipality ${ibge} has no active certificate in the vault`;
  if (problem === CredentialsProblem.EXPIRED) return `the active certificate of municipality ${ibge} has expired`;
  return `the vault cannot decrypt the certificate of municipality ${ibge} (${vaultMessage})`;
}

/** Without a known reason (a vault older than this gateway): the code alone, and for FAILED_PRECONDITION its message. */
function problemWithoutReason(e: ConnectError): CredentialsProblem | undefined {
  if (e.code === Code.NotFound) return CredentialsProblem.NO_ACTIVE_CERTIFICATE;
  if (e.code === Code.FailedPrecondition)
    return /expir/i.test(e.rawMessage) ? CredentialsProblem.EXPIRED : CredentialsProblem.UNDECRYPTABLE;
  return undefined;
}

/** The vault's answer in the gateway's terms (adn_gateway.proto package comment). */
export function mapVaultError(err: unknown, ibge: string): Error {
  const e = ConnectError.from(err);
  const reason = e.findDetails(ErrorInfoSchema).find((d) => d.domain === "malha.vault")?.reason;
  // A reason this gateway does not know yet falls back to the code, as a vault without reasons does.
  const problem = (reason !== undefined ? VAULT_REASONS[reason] : undefined) ?? problemWithoutReason(e);
  if (problem !== undefined) return new CredentialsUnavailableError(problem, problemMessage(problem, ibge, e.rawMessage));
  switch (e.code) {
    case Code.DataLoss:
      return new CredentialsUnavailableError(
        CredentialsProblem.UNDECRYPTABLE,
        `the vault's ciphertext for municipality ${ibge} fails authentication`,
      );
    case Code.PermissionDenied:
    case Code.Unauthenticated:
      return new ConnectError(
        `the vault refused the gateway's identity (${e.rawMessage}); check mesh TLS or VAULT_CREDENTIALS_SECRET`,
        Code.FailedPrecondition,
      );
    case Code.InvalidArgument:
      return new ConnectError(`the vault refused the request: ${e.rawMessage}`, Code.InvalidArgument);
    case Code.DeadlineExceeded:
      return e;
    default:
      // Includes CANCELED that our caller did not ask for: a refused TLS handshake surfaces that way.
      return new ConnectError(`vault unreachable: ${e.rawMessage}`, Code.Unavailable);
  }
}
