// An error carried as data: one entry's refusal inside a batched call's answer, so that one entry's
// refusal never fails the others (docs/decisions/0036-batched-run-begin-and-finish.md). The caller gets
// back the very ConnectError a single-entry call would have thrown — code, message and typed details
// (ErrorInfo reasons, StaleFence, …), which it reads with findDetails as before.
import { create, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { BatchAnswer } from "../batching/micro-batcher.js";

/** The fields of a refusal message (code, message, details), as the batched calls' protos spell them. */
export interface EntryStatus {
  code: number;
  message: string;
  details: Any[];
}

const TYPE_URL_PREFIX = "type.googleapis.com/";

/** A refusal to send: any error that is not a ConnectError is a bug and is not sent (the caller throws it). */
export function entryStatusOf(err: ConnectError): EntryStatus {
  const details = err.details.map((d) =>
    "desc" in d
      ? create(AnySchema, { typeUrl: TYPE_URL_PREFIX + d.desc.typeName, value: toBinary(d.desc, create(d.desc, d.value as never)) })
      : create(AnySchema, { typeUrl: TYPE_URL_PREFIX + d.type, value: d.value }),
  );
  return { code: err.code, message: err.rawMessage, details };
}

/** The error a refusal stands for; an unknown code becomes UNKNOWN. */
export function errorOfEntryStatus(status: EntryStatus): ConnectError {
  const code = Code[status.code] !== undefined && status.code !== 0 ? (status.code as Code) : Code.Unknown;
  const err = new ConnectError(status.message, code);
  err.details = status.details.map((d) => ({ type: d.typeUrl.slice(d.typeUrl.lastIndexOf("/") + 1), value: d.value }));
  return err;
}

/** One entry of a batched call's response (a oneof of `okCase` or `refused`) as the batcher's answer. */
export function answerOfEntry<T>(result: { case: string | undefined; value?: unknown }, okCase: string): BatchAnswer<T> {
  if (result.case === okCase) return { ok: true, value: result.value as T };
  if (result.case === "refused") return { ok: false, error: errorOfEntryStatus(result.value as EntryStatus) };
  return { ok: false, error: new ConnectError(`a batched call's entry came back with neither ${okCase} nor refused`) };
}
