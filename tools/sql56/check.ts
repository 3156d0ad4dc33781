// A mechanical MySQL 5.6 compatibility check over SQL files (docs/domain/mysql56.md). The dev
// database (MariaDB 10.11) accepts most of what 5.6 refuses, so this is what keeps migrations portable.
// Comments and string literals are never inspected: the lexer turns them into opaque tokens first.
import { isPunct, isWord, tokenizeSql } from "../../libs/db/sql-lexer.js";
import type { Token } from "../../libs/db/sql-lexer.js";
import { applyDdl, matchParen } from "./ddl.js";
import type { ColumnDefinition, RuleFinding, Schema } from "./ddl.js";

export interface SqlSource {
  /** Path shown in findings. */
  path: string;
  text: string;
}

export interface Sql56Finding extends RuleFinding {
  file: string;
}

export function formatFinding(f: Sql56Finding): string {
  return `${f.file}:${f.line}: ${f.rule}: ${f.message}`;
}

const ALLOWED_CHARSETS = new Set(["utf8mb4", "ascii", "latin1", "binary"]);
const TIME_FUNCTIONS = new Set(["CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"]);
// Words that may follow OVER when it is not a window clause (an alias or column named `over`).
const NOT_A_WINDOW_NAME = new Set([
  "FROM",
  "WHERE",
  "GROUP",
  "ORDER",
  "LIMIT",
  "HAVING",
  "UNION",
  "AS",
  "ON",
  "JOIN",
  "AND",
  "OR",
  "INTO",
  "SET",
  "VALUES",
]);

function collationProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower === "utf8mb4_unicode_ci" || lower === "utf8mb4_bin" || lower === "binary") return undefined;
  if (lower.startsWith("ascii_") || lower.startsWith("latin1_")) return undefined;
  if (lower.includes("_0900_") || lower.includes("uca1400")) return `collation ${name} does not exist in MySQL 5.6; use utf8mb4_unicode_ci`;
  return `collation ${name} is outside the project set (utf8mb4_unicode_ci, utf8mb4_bin, ascii_*, latin1_*, binary)`;
}

function charsetProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (ALLOWED_CHARSETS.has(lower)) return undefined;
  if (lower === "utf8" || lower === "utf8mb3") return `charset ${name} (3-byte utf8) is discouraged; use utf8mb4`;
  return `charset ${name} is outside the project set (utf8mb4, ascii, latin1, binary)`;
}

/** Name after `KEYWORD [=]`, written as a word, `quoted` or 'string'. */
function valueAfter(tokens: Token[], i: number): Token | undefined {
  const at = isPunct(tokens[i], "=") ? i + 1 : i;
  const t = tokens[at];
  return t && (t.kind === "word" || t.kind === "quoted" || t.kind === "string") ? t : undefined;
}

function isIdent(t: Token | undefined): boolean {
  return t !== undefined && (t.kind === "word" || t.kind === "quoted");
}

/** `WITH [RECURSIVE] name [(cols)] AS (` */
function isCteAt(tokens: Token[], i: number): boolean {
  let j = i + 1;
  if (isWord(tokens[j], "RECURSIVE")) j++;
  if (!isIdent(tokens[j])) return false;
  j++;
  if (isPunct(tokens[j], "(")) {
    const close = matchParen(tokens, j);
    if (close === -1) return false;
    j = close + 1;
  }
  return isWord(tokens[j], "AS") && isPunct(tokens[j + 1], "(");
}

/** `… AS alias [(cols)] ON DUPLICATE KEY UPDATE` after VALUES or SET (the 8.0.19 row alias). */
function isRowAliasBefore(tokens: Token[], on: number): boolean {
  let j = on - 1;
  if (isPunct(tokens[j], ")")) {
    let depth = 0;
    for (; j >= 0; j--) {
      if (isPunct(tokens[j], ")")) depth++;
      else if (isPunct(tokens[j], "(") && --depth === 0) break;
    }
    j--;
  }
  if (!isIdent(tokens[j]) || !isWord(tokens[j - 1], "AS")) return false;
  // INSERT … SELECT … FROM t AS x ON DUPLICATE KEY UPDATE is a table alias, valid in 5.6.
  let depth = 0;
  for (let k = 0; k < j; k++) {
    if (isPunct(tokens[k], "(")) depth++;
    else if (isPunct(tokens[k], ")")) depth--;
    else if (depth === 0 && isWord(tokens[k], "SELECT")) return false;
  }
  return true;
}

function tokenRules(tokens: Token[]): RuleFinding[] {
  const findings: RuleFinding[] = [];
  const add = (t: Token, rule: string, message: string): void => {
    findings.push({ line: t.line, rule, message });
  };
  const first = tokens[0];
  const dml = isWord(first, "INSERT", "REPLACE", "UPDATE", "DELETE");
  const alterTable = isWord(first, "ALTER") && tokens.slice(1, 4).some((t) => isWord(t, "TABLE"));
  const ddlTable = alterTable || (isWord(first, "CREATE") && tokens.slice(1, 5).some((t) => isWord(t, "TABLE")));
  const indexStatement =
    (isWord(first, "CREATE") || isWord(first, "DROP")) && tokens.slice(1, 6).some((t) => isWord(t, "INDEX")) && !ddlTable;

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const next = tokens[i + 1];
    const prev = tokens[i - 1];
    if (t.kind === "punct") {
      if (t.text === "->" || t.text === "->>") add(t, "json", `JSON path operator ${t.text} needs MySQL 5.7`);
      continue;
    }
    if (t.kind !== "word") continue;
    const w = t.value.toUpperCase();

    if (/^JSON_[A-Z_]+$/.test(w) && isPunct(next, "("))
      add(t, "json", `${t.value}() needs MySQL 5.7; keep JSON in MEDIUMTEXT and handle it in the app`);
    else if (w === "JSON" && isWord(prev, "AS")) add(t, "json", "CAST/CONVERT … AS JSON needs MySQL 5.7");
    else if (w === "WITH" && isCteAt(tokens, i)) add(t, "cte", "common table expressions (WITH … AS) need MySQL 8.0");
    else if (
      w === "OVER" &&
      (isPunct(next, "(") || (!ddlTable && isIdent(next) && !NOT_A_WINDOW_NAME.has(next?.value.toUpperCase() ?? "")))
    ) {
      add(t, "window-function", "window functions (OVER …) need MySQL 8.0");
    } else if (w === "WINDOW" && isIdent(next) && isWord(tokens[i + 2], "AS") && isPunct(tokens[i + 3], "(")) {
      add(t, "window-function", "WINDOW clauses need MySQL 8.0");
    } else if (w === "RETURNING" && dml) add(t, "returning", "RETURNING is MariaDB-only; read the row back with SELECT");
    else if (
      w === "DEFAULT" &&
      (isPunct(next, "(") || (next?.kind === "word" && isPunct(tokens[i + 2], "(") && !TIME_FUNCTIONS.has(next.value.toUpperCase())))
    ) {
      add(t, "expression-default", "expression defaults need MySQL 8.0.13; only literals and CURRENT_TIMESTAMP are allowed");
    } else if (
      w === "SEQUENCE" &&
      isWord(tokens[0], "CREATE", "ALTER", "DROP") &&
      tokens.slice(1, i).every((x) => isWord(x, "OR", "REPLACE", "TEMPORARY"))
    ) {
      add(t, "sequence", "sequences do not exist in MySQL; use AUTO_INCREMENT");
    } else if ((w === "NEXTVAL" || w === "LASTVAL" || w === "SETVAL") && isPunct(next, "(")) {
      add(t, "sequence", `${t.value}() is MariaDB-only; use AUTO_INCREMENT`);
    } else if ((w === "NEXT" || w === "PREVIOUS") && isWord(next, "VALUE") && isWord(tokens[i + 2], "FOR")) {
      add(t, "sequence", `${w} VALUE FOR is MariaDB-only; use AUTO_INCREMENT`);
    } else if (
      w === "IF" &&
      (alterTable || indexStatement) &&
      (isWord(next, "EXISTS") || (isWord(next, "NOT") && isWord(tokens[i + 2], "EXISTS")))
    ) {
      add(
        t,
        "if-exists",
        `IF ${isWord(next, "NOT") ? "NOT " : ""}EXISTS on columns/indexes is MariaDB-only; 5.6 has it only for CREATE/DROP TABLE`,
      );
    } else if (
      w === "OR" &&
      isWord(prev, "CREATE") &&
      isWord(next, "REPLACE") &&
      !isWord(tokens[i + 2], "VIEW", "ALGORITHM", "DEFINER", "SQL")
    ) {
      add(t, "create-or-replace", "CREATE OR REPLACE is MariaDB-only except for views");
    } else if (w === "RENAME" && alterTable && isWord(next, "COLUMN")) {
      add(t, "rename-column", "RENAME COLUMN needs MySQL 8.0; use CHANGE old new <full definition>");
    } else if (w === "RENAME" && alterTable && isWord(next, "INDEX", "KEY")) {
      add(t, "rename-index", "RENAME INDEX needs MySQL 5.7; drop and re-create the index");
    } else if (w === "CHECK" && isPunct(next, "(")) {
      add(t, "check-constraint", "CHECK constraints are parsed and ignored by 5.6 (but enforced by MariaDB); validate in the app");
    } else if (w === "COLLATE") {
      const name = valueAfter(tokens, i + 1);
      const problem = name ? collationProblem(name.value) : undefined;
      if (name && problem) add(name, "collation", problem);
    } else if ((w === "SET" && isWord(prev, "CHARACTER")) || w === "CHARSET" || (w === "NAMES" && isWord(prev, "SET"))) {
      const name = valueAfter(tokens, i + 1);
      const problem = name ? charsetProblem(name.value) : undefined;
      if (name && problem) add(name, "charset", problem);
    } else if (w === "ENGINE") {
      const name = valueAfter(tokens, i + 1);
      if (name && name.value.toLowerCase() !== "innodb") add(name, "engine", `engine ${name.value}: use InnoDB`);
    } else if (w === "ON" && isWord(next, "DUPLICATE") && isWord(first, "INSERT") && isRowAliasBefore(tokens, i)) {
      add(t, "odku-row-alias", "INSERT … AS alias ON DUPLICATE KEY needs MySQL 8.0.19; use VALUES(col)");
    }
  }
  return findings;
}

function columnRules(columns: ColumnDefinition[]): RuleFinding[] {
  const findings: RuleFinding[] = [];
  for (const def of columns) {
    const { column } = def;
    if (column.type === "JSON") {
      findings.push({
        line: def.typeToken.line,
        rule: "json",
        message: `column ${column.name}: JSON type needs MySQL 5.7; use MEDIUMTEXT`,
      });
    }
    if (def.generated) {
      findings.push({
        line: def.generated.line,
        rule: "generated-column",
        message: `column ${column.name}: generated columns need MySQL 5.7`,
      });
    }
    if (column.type === "TIMESTAMP" && !(def.nullSpecified && def.hasDefault)) {
      findings.push({
        line: def.typeToken.line,
        rule: "timestamp-default",
        message: `TIMESTAMP column ${column.name} needs explicit NULL/NOT NULL and DEFAULT (5.6 adds implicit ones otherwise)`,
      });
    }
  }
  return findings;
}

function statementsOf(tokens: Token[]): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  for (const token of tokens) {
    if (token.kind === "marker") continue;
    if (isPunct(token, ";")) {
      if (current.length > 0) statements.push(current);
      current = [];
    } else current.push(token);
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** Checks one file, updating `schema` with its DDL so later files are measured against it. */
export function checkSqlText(source: SqlSource, schema: Schema): Sql56Finding[] {
  const { tokens, error } = tokenizeSql(source.text);
  const findings: RuleFinding[] = [];
  if (error) findings.push({ line: error.line, rule: "syntax", message: error.message });
  for (const statement of statementsOf(tokens)) {
    if (isWord(statement[0], "DELIMITER")) {
      findings.push({
        line: statement[0]?.line ?? 1,
        rule: "syntax",
        message: "DELIMITER is a mysql client command; migrations cannot use it",
      });
      continue;
    }
    const ddl = applyDdl(statement, schema);
    findings.push(...tokenRules(statement), ...columnRules(ddl.columns), ...ddl.findings);
  }
  const seen = new Set<string>();
  return findings
    .map((f) => ({ file: source.path, ...f }))
    .filter((f) => {
      const key = formatFinding(f);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.line - b.line);
}

/** Checks files in the given order against one schema accumulated across them. */
export function checkSql56(sources: SqlSource[]): Sql56Finding[] {
  const schema: Schema = new Map();
  return sources.flatMap((source) => checkSqlText(source, schema));
}
