import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ImportRejectedSchema, ImportRejectionReason } from "../../libs/gen/malha/vault/v1/vault_pb.js";

const FAILED_PRECONDITION_REASONS = new Set([ImportRejectionReason.EXPIRED, ImportRejectionReason.NOT_YET_VALID]);

/** Why a PFX cannot be imported; turned into a ConnectError with the ImportRejected detail at the edge. */
export class ImportRefusal extends Error {
  override name = "ImportRefusal";
  constructor(
    readonly reason: ImportRejectionReason,
    message: string,
  ) {
    super(message);
  }

  get code(): Code {
    return FAILED_PRECONDITION_REASONS.has(this.reason) ? Code.FailedPrecondition : Code.InvalidArgument;
  }

  toConnectError(): ConnectError {
    return new ConnectError(this.message, this.code, undefined, [
      { desc: ImportRejectedSchema, value: create(ImportRejectedSchema, { reason: this.reason }) },
    ]);
  }
}
