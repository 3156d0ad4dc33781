// Byte model of MySQL 5.6 / InnoDB COMPACT columns: how much an index key part and a row may take.
// Sizes are worst cases, as InnoDB itself computes them when it checks a definition.

export interface ColumnModel {
  name: string;
  /** Normalised upper-case type: VARCHAR, INT, DATETIME, … */
  type: string;
  /** Characters for string types, digits for DECIMAL, bits for BIT, fsp for temporal types. */
  length?: number;
  scale?: number;
  /** Charset named on the column (directly or through its COLLATE); undefined means the table default. */
  charset?: string;
  nullable: boolean;
  /** Number of ENUM / SET members. */
  members?: number;
}

export const MAX_KEY_PART_BYTES = 767;
export const MAX_KEY_BYTES = 3072;
/** Half a 16 KiB page: a record must be smaller than this; strict mode checks the worst case. */
export const MAX_ROW_BYTES = 8126;
/** The charset assumed when neither the column nor the table names one (the project's server default). */
export const DEFAULT_CHARSET = "utf8mb4";

const CHARSET_BYTES: Record<string, number> = {
  utf8mb4: 4,
  utf8mb3: 3,
  utf8: 3,
  utf16: 4,
  utf16le: 4,
  utf32: 4,
  ucs2: 2,
  big5: 2,
  gbk: 2,
  gb2312: 2,
  euckr: 2,
  cp932: 2,
  sjis: 2,
  ujis: 3,
  eucjpms: 3,
  gb18030: 4,
};

const TEXT_TYPES = new Set(["TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"]);
const BLOB_TYPES = new Set(["TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"]);
const CHAR_TYPES = new Set(["CHAR", "VARCHAR"]);
const BINARY_TYPES = new Set(["BINARY", "VARBINARY"]);

const FIXED_BYTES: Record<string, number> = {
  TINYINT: 1,
  SMALLINT: 2,
  MEDIUMINT: 3,
  INT: 4,
  BIGINT: 8,
  FLOAT: 4,
  DOUBLE: 8,
  DATE: 3,
  YEAR: 1,
};

const TYPE_ALIASES: Record<string, string> = {
  INTEGER: "INT",
  INT1: "TINYINT",
  INT2: "SMALLINT",
  INT3: "MEDIUMINT",
  INT4: "INT",
  INT8: "BIGINT",
  MIDDLEINT: "MEDIUMINT",
  BOOL: "TINYINT",
  BOOLEAN: "TINYINT",
  SERIAL: "BIGINT",
  DEC: "DECIMAL",
  NUMERIC: "DECIMAL",
  FIXED: "DECIMAL",
  REAL: "DOUBLE",
  FLOAT4: "FLOAT",
  FLOAT8: "DOUBLE",
  CHARACTER: "CHAR",
  NCHAR: "CHAR",
  NVARCHAR: "VARCHAR",
  VARCHARACTER: "VARCHAR",
};

export function normaliseType(word: string): string {
  const upper = word.toUpperCase();
  return TYPE_ALIASES[upper] ?? upper;
}

/** Charset implied by a charset or collation name: `utf8mb4_bin` → `utf8mb4`, `binary` → `binary`. */
export function charsetOfCollation(collation: string): string {
  const lower = collation.toLowerCase();
  const underscore = lower.indexOf("_");
  return underscore === -1 ? lower : lower.slice(0, underscore);
}

export function bytesPerChar(charset: string): number {
  const lower = charset.toLowerCase();
  if (lower === "latin1" || lower === "ascii" || lower === "binary") return 1;
  // Unknown multi-byte charsets count as 4, the worst case, rather than slipping through.
  return (
    CHARSET_BYTES[lower] ??
    (/^(latin|cp12|cp8|koi8|dec8|hp8|swe7|greek|hebrew|tis620|armscii8|geostd8|keybcs2|macce|macroman|cp85)/.test(lower) ? 1 : 4)
  );
}

export function isStringType(type: string): boolean {
  return CHAR_TYPES.has(type) || BINARY_TYPES.has(type) || TEXT_TYPES.has(type) || BLOB_TYPES.has(type);
}

export function isBlobType(type: string): boolean {
  return TEXT_TYPES.has(type) || BLOB_TYPES.has(type);
}

function usesCharset(type: string): boolean {
  return CHAR_TYPES.has(type) || TEXT_TYPES.has(type);
}

export function effectiveCharset(column: ColumnModel, tableDefault: string | undefined): string {
  return (column.charset ?? tableDefault ?? DEFAULT_CHARSET).toLowerCase();
}

function decimalBytes(precision: number, scale: number): number {
  const partial = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
  const digits = (n: number): number => Math.floor(n / 9) * 4 + (partial[n % 9] ?? 4);
  return digits(precision - scale) + digits(scale);
}

/** Storage bytes of a fixed-size column, or undefined for variable-length ones. */
function fixedBytes(column: ColumnModel, charset: string): number | undefined {
  const { type } = column;
  const fsp = (n: number | undefined): number => Math.ceil((n ?? 0) / 2);
  if (FIXED_BYTES[type] !== undefined) return FIXED_BYTES[type];
  if (type === "DECIMAL") return decimalBytes(column.length ?? 10, column.scale ?? 0);
  if (type === "DATETIME") return 5 + fsp(column.length);
  if (type === "TIMESTAMP") return 4 + fsp(column.length);
  if (type === "TIME") return 3 + fsp(column.length);
  if (type === "BIT") return Math.ceil((column.length ?? 1) / 8);
  if (type === "ENUM") return (column.members ?? 0) > 255 ? 2 : 1;
  if (type === "SET") return Math.min(8, Math.ceil((column.members ?? 1) / 8));
  if (type === "BINARY") return column.length ?? 1;
  // COMPACT stores CHAR in a multi-byte charset as variable length.
  if (type === "CHAR" && bytesPerChar(charset) === 1) return column.length ?? 1;
  return undefined;
}

function maxVariableBytes(column: ColumnModel, charset: string): number {
  if (isBlobType(column.type)) return Number.MAX_SAFE_INTEGER;
  const chars = column.length ?? 1;
  return usesCharset(column.type) ? chars * bytesPerChar(charset) : chars;
}

export interface KeyPartCost {
  bytes: number;
  /** Set when the key part is invalid whatever its size. */
  problem?: string;
}

export function keyPartCost(column: ColumnModel, prefix: number | undefined, tableDefault: string | undefined): KeyPartCost {
  const charset = effectiveCharset(column, tableDefault);
  const perChar = usesCharset(column.type) ? bytesPerChar(charset) : 1;
  if (isBlobType(column.type)) {
    if (prefix === undefined) return { bytes: 0, problem: `${column.type} column ${column.name} needs a prefix length in a key` };
    return { bytes: prefix * perChar };
  }
  if (isStringType(column.type)) {
    const length = column.length ?? 1;
    if (prefix !== undefined && prefix > length) {
      return { bytes: length * perChar, problem: `prefix (${prefix}) is longer than ${column.name} ${column.type}(${length})` };
    }
    return { bytes: (prefix ?? length) * perChar };
  }
  if (prefix !== undefined) return { bytes: 0, problem: `prefix length on non-string column ${column.name}` };
  return { bytes: fixedBytes(column, charset) ?? 8 };
}

export function describeColumn(column: ColumnModel, tableDefault: string | undefined): string {
  const size = column.length !== undefined && isStringType(column.type) ? `(${column.length})` : "";
  const charset = usesCharset(column.type) ? ` ${effectiveCharset(column, tableDefault)}` : "";
  return `${column.type}${size}${charset}`;
}

/**
 * Worst-case COMPACT record size in the clustered index, following InnoDB's own check: fixed columns at
 * their size; variable ones at their maximum plus 1–2 length bytes; a column that may go off-page
 * (BLOB/TEXT, or more than 255 bytes) at most its 768-byte local prefix plus the 20-byte pointer.
 * Calibrated against MariaDB 10.11's "Row size too large (> 8126)" on COMPACT tables.
 */
export function compactRowBytes(columns: ColumnModel[], tableDefault: string | undefined, hasPrimaryKey: boolean): number {
  let size = 5 + 6 + 7; // record header, DB_TRX_ID, DB_ROLL_PTR
  if (!hasPrimaryKey) size += 6; // DB_ROW_ID
  size += Math.ceil(columns.filter((c) => c.nullable).length / 8);
  for (const column of columns) {
    const charset = effectiveCharset(column, tableDefault);
    const fixed = fixedBytes(column, charset);
    if (fixed !== undefined) {
      size += fixed;
      continue;
    }
    const max = maxVariableBytes(column, charset);
    const big = isBlobType(column.type) || max > 255;
    if (big && max > 768) size += 768 + 20 + 2;
    else size += max + (max < 256 ? 1 : 2);
  }
  return size;
}
