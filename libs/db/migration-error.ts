export type MigrationErrorKind =
  | "no_directory"
  | "bad_name"
  | "duplicate_version"
  | "syntax"
  | "empty_file"
  | "no_database"
  | "lock_timeout"
  | "checksum_mismatch"
  | "missing_file"
  | "renamed_file"
  | "out_of_order"
  | "statement_failed";

export interface MigrationErrorDetails {
  file?: string;
  expectedChecksum?: string;
  actualChecksum?: string;
  /** 1-based index of the failing statement within its file. */
  statementIndex?: number;
  statementLine?: number;
  serverCode?: string;
  serverMessage?: string;
}

/** A refusal or failure of the migration runner. The message is a single line, fit for operators. */
export class MigrationError extends Error {
  override name = "MigrationError";
  readonly file: string | undefined;
  readonly expectedChecksum: string | undefined;
  readonly actualChecksum: string | undefined;
  readonly statementIndex: number | undefined;
  readonly statementLine: number | undefined;
  readonly serverCode: string | undefined;
  readonly serverMessage: string | undefined;

  constructor(
    readonly kind: MigrationErrorKind,
    message: string,
    details: MigrationErrorDetails = {},
  ) {
    super(message.replace(/\s+/g, " ").trim());
    this.file = details.file;
    this.expectedChecksum = details.expectedChecksum;
    this.actualChecksum = details.actualChecksum;
    this.statementIndex = details.statementIndex;
    this.statementLine = details.statementLine;
    this.serverCode = details.serverCode;
    this.serverMessage = details.serverMessage;
  }
}
