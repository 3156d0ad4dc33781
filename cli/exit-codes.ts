import { Code, ConnectError } from "@connectrpc/connect";

/** What a script can branch on. Stable: documented in the README and `malha --help`. */
export const EXIT = {
  OK: 0,
  /** Any other RPC failure (INTERNAL, UNKNOWN…). */
  RPC_ERROR: 1,
  /** Bad command line; nothing was sent. */
  USAGE: 2,
  /** The thing named does not exist (NOT_FOUND). */
  NOT_FOUND: 3,
  /** The service refused the request (INVALID_ARGUMENT, FAILED_PRECONDITION, ALREADY_EXISTS…). */
  REJECTED: 4,
  /** The service could not be reached or did not answer in time; or `--timeout` passed. */
  UNAVAILABLE: 5,
  /** Not allowed (PERMISSION_DENIED, UNAUTHENTICATED). */
  DENIED: 6,
  /** `sync now --wait`: a run ended FAILED, RATE_LIMITED, CANCELLED or ABANDONED; `billing … create/upload --wait`: the job ended FAILED. */
  RUN_FAILED: 7,
  /** `billing jobs/remessas download`: the signed link failed, or the bytes do not match the manifest's sha256/size. */
  DOWNLOAD_FAILED: 8,
  /** `sync now`, `sync all`: every feed was skipped (not eligible, cooling down, no certificate…), so nothing ran. */
  NOTHING_RAN: 9,
} as const;

export class UsageError extends Error {
  override name = "UsageError";
}

/** A local failure with a chosen exit code (e.g. `--timeout` passed while watching). */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = "CliFailure";
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.USAGE;
  if (err instanceof CliFailure) return err.code;
  if (!(err instanceof ConnectError)) return EXIT.RPC_ERROR;
  switch (err.code) {
    case Code.NotFound:
      return EXIT.NOT_FOUND;
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.AlreadyExists:
    case Code.OutOfRange:
    case Code.ResourceExhausted:
    case Code.Aborted:
      return EXIT.REJECTED;
    case Code.Unavailable:
    case Code.DeadlineExceeded:
      return EXIT.UNAVAILABLE;
    case Code.PermissionDenied:
    case Code.Unauthenticated:
      return EXIT.DENIED;
    default:
      return EXIT.RPC_ERROR;
  }
}
