// The gateway's errors with the detail messages adn_gateway.proto documents for each ADN condition.
import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AdnEnvelope, AdnMessageJson } from "../../libs/adn/envelope.js";
import {
  AdnMessageSchema,
  AdnRejectionSchema,
  AmbienteMismatchSchema,
  CredentialsUnavailableSchema,
  RateLimitedSchema,
  TransientFailureSchema,
  UnexpectedResponseSchema,
  type CredentialsProblem,
} from "../../libs/gen/malha/adn/v1/errors_pb.js";
import type { Ambiente } from "../../libs/gen/malha/nfse/v1/feed_pb.js";

function withDetail<D extends DescMessage>(message: string, code: Code, desc: D, value: MessageInitShape<D>): ConnectError {
  return new ConnectError(message, code, undefined, [{ desc, value }]);
}

export function adnMessage(m: AdnMessageJson) {
  return create(AdnMessageSchema, m);
}

export function rateLimited(cooldown: { until: number; observedAt: number }, fromCache: boolean): ConnectError {
  const until = new Date(cooldown.until).toISOString();
  return withDetail(
    fromCache
      ? `ADN rate limit: cool-down after an HTTP 429 runs until ${until}; not calling the ADN`
      : `ADN answered HTTP 429 (rate limited); do not call before ${until}`,
    Code.ResourceExhausted,
    RateLimitedSchema,
    { cooldownUntil: timestampFromMs(cooldown.until), observedAt: timestampFromMs(cooldown.observedAt), fromCache },
  );
}

export function rejection(env: AdnEnvelope, httpStatus: number): ConnectError {
  const first = env.erros[0];
  const what = first ? `${first.codigo} ${first.descricao}`.trim() : "no error code given";
  return withDetail(`ADN rejected the request (HTTP ${httpStatus}): ${what}`, Code.FailedPrecondition, AdnRejectionSchema, {
    codigo: first?.codigo ?? "",
    descricao: first?.descricao ?? "",
    erros: env.erros.map(adnMessage),
    httpStatus,
  });
}

export function ambienteMismatch(expected: Ambiente, received: string): ConnectError {
  return withDetail(
    `ADN answered TipoAmbiente ${received || "(none)"} but the feed expects ${expected === 1 ? "PRODUCAO" : "HOMOLOGACAO"}: check ADN_BASE_URL_*`,
    Code.FailedPrecondition,
    AmbienteMismatchSchema,
    { expected, received },
  );
}

export function credentialsUnavailable(problem: CredentialsProblem, message: string, certificateId: string): ConnectError {
  return withDetail(message, Code.FailedPrecondition, CredentialsUnavailableSchema, { problem, certificateId });
}

export function transientFailure(attempts: number, lastHttpStatus: number, lastError: string): ConnectError {
  return withDetail(`ADN unavailable after ${attempts} attempt(s): ${lastError}`, Code.Unavailable, TransientFailureSchema, {
    attempts,
    lastHttpStatus,
    lastError,
  });
}

export function unexpectedResponse(httpStatus: number, contentType: string, body: Buffer, why: string): ConnectError {
  const excerpt = body
    .subarray(0, 512)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
  return withDetail(
    `unexpected ADN response (HTTP ${httpStatus}, ${contentType || "no content type"}): ${why}`,
    Code.Unknown,
    UnexpectedResponseSchema,
    {
      httpStatus,
      contentType,
      bodyExcerpt: excerpt,
    },
  );
}
