// Store errors: every refusal carries a malha.common.v1.ErrorInfo (domain "malha.store") so that callers
// switch on the reason, never on the message (store.proto lists the reasons and their codes).
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectError } from "@connectrpc/connect";
import { reasonedError } from "../../libs/rpc/errors.js";
import type { INVALID_PAGE_TOKEN } from "../../libs/rpc/page-token.js";
import { NotEligibleSchema, StaleFenceSchema } from "../../libs/gen/malha/store/v1/types_pb.js";

export const STORE_ERROR_DOMAIN = "malha.store";

export type StoreErrorReason =
  | "INVALID_IBGE"
  | "MUNICIPALITY_NOT_FOUND"
  | "FEED_NOT_FOUND"
  | "RUN_NOT_FOUND"
  | "FEED_DISABLED"
  | "STALE_FENCE"
  | "NOT_ELIGIBLE"
  | "RUN_NOT_RUNNING"
  | "RUN_IN_PROGRESS"
  | "CURSOR_OUT_OF_RANGE"
  | "PREDECESSOR_NOT_APPLIED"
  | typeof INVALID_PAGE_TOKEN;

function storeError(
  message: string,
  code: Code,
  reason: StoreErrorReason | undefined,
  metadata: Record<string, string> = {},
  extra: ConnectError["details"] = [],
): ConnectError {
  return reasonedError(STORE_ERROR_DOMAIN, message, code, reason, metadata, extra);
}

/** INVALID_ARGUMENT for a malformed request field (no specific reason). */
export const badRequest = (message: string) => storeError(message, Code.InvalidArgument, undefined);

export const invalidIbge = (value: string, why: string) =>
  // The value is echoed JSON-quoted and cut short: it may be anything a caller typed, including SQL.
  storeError(`invalid ibge ${JSON.stringify(value.slice(0, 32))}: ${why}`, Code.InvalidArgument, "INVALID_IBGE");

export const municipalityNotFound = (ibge: string) =>
  storeError(`municipality ${ibge} is not registered`, Code.NotFound, "MUNICIPALITY_NOT_FOUND", { ibge });

export const feedNotFound = (feed: string) => storeError(`feed ${feed} is not configured`, Code.NotFound, "FEED_NOT_FOUND", { feed });

export const runNotFound = (runId: string) =>
  storeError(`run ${JSON.stringify(runId.slice(0, 40))} not found`, Code.NotFound, "RUN_NOT_FOUND");

export const feedDisabled = (feed: string, why: string) =>
  storeError(`feed ${feed} cannot run: ${why}`, Code.FailedPrecondition, "FEED_DISABLED", { feed });

export const runNotRunning = (runId: string, outcome: string) =>
  storeError(`run ${runId} already finished (${outcome})`, Code.FailedPrecondition, "RUN_NOT_RUNNING", {
    run_id: runId,
    outcome,
  });

export const runInProgress = (feed: string, runId: string) =>
  storeError(`feed ${feed} is held by run ${runId}`, Code.FailedPrecondition, "RUN_IN_PROGRESS", {
    feed,
    run_id: runId,
  });

export const cursorOutOfRange = (message: string) => storeError(message, Code.InvalidArgument, "CURSOR_OUT_OF_RANGE");

/** ABORTED: a page sent ahead names a cursor its run has not reached (decision 0052); the caller sends it again once the page before it is answered. */
export const predecessorNotApplied = (runId: string, follows: bigint, stored: bigint) =>
  storeError(
    `run ${runId}: this page follows cursor ${follows} but the stored cursor is ${stored}: the page before it is not applied; nothing was written`,
    Code.Aborted,
    "PREDECESSOR_NOT_APPLIED",
    { follows_cursor: follows.toString(), stored_cursor: stored.toString() },
  );

export function staleFence(feed: string, presented: bigint, current: bigint, holder: string): ConnectError {
  return storeError(
    `stale fence token ${presented} for feed ${feed}: the feed is held with token ${current}; nothing was written`,
    Code.FailedPrecondition,
    "STALE_FENCE",
    { feed, presented_fence_token: String(presented), current_fence_token: String(current) },
    [
      {
        desc: StaleFenceSchema,
        value: create(StaleFenceSchema, {
          presentedFenceToken: presented,
          currentFenceToken: current,
          currentHolder: holder,
        }),
      },
    ] as never,
  );
}

export function notEligible(feed: string, nextEligibleAt: Date | undefined, cooldownUntil: Date | undefined): ConnectError {
  const parts: string[] = [];
  if (cooldownUntil) parts.push(`cooling down until ${cooldownUntil.toISOString()}`);
  if (nextEligibleAt) parts.push(`not eligible before ${nextEligibleAt.toISOString()}`);
  return storeError(`feed ${feed} may not be synced yet: ${parts.join("; ")}`, Code.FailedPrecondition, "NOT_ELIGIBLE", { feed }, [
    {
      desc: NotEligibleSchema,
      value: create(NotEligibleSchema, {
        ...(nextEligibleAt ? { nextEligibleAt: timestampFromDate(nextEligibleAt) } : {}),
        ...(cooldownUntil ? { cooldownUntil: timestampFromDate(cooldownUntil) } : {}),
      }),
    },
  ] as never);
}

/** The contract defines no reason for it: the municipality exists, the note is just not stored (yet). */
export const documentNotFound = (ibge: string, chave: string) =>
  storeError(`note ${chave} is not stored in municipality ${ibge} (its events may be: see ListEvents)`, Code.NotFound, undefined);

export const alreadyExists = (message: string) => storeError(message, Code.AlreadyExists, undefined);

export const unavailable = (message: string) => storeError(message, Code.Unavailable, undefined);
