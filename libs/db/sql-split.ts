import { isWord, tokenizeSql } from "./sql-lexer.js";
import type { Token } from "./sql-lexer.js";

export interface SqlStatement {
  /** Source text from the statement's first token to its last, without the terminating `;`. */
  text: string;
  /** 1-based line where the statement starts (comments before it excluded). */
  line: number;
  tokens: Token[];
}

export class SqlSplitError extends Error {
  override name = "SqlSplitError";
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/**
 * Splits a SQL script on `;`, ignoring semicolons inside quotes and comments, and drops statements that
 * are empty or consist only of comments. Client-side `DELIMITER` is refused: the server never sees it, so
 * a file that needs it cannot be sent statement by statement.
 */
export function splitSqlStatements(source: string): SqlStatement[] {
  const { tokens, error } = tokenizeSql(source);
  if (error) throw new SqlSplitError(error.message, error.line);

  const statements: SqlStatement[] = [];
  let current: Token[] = [];
  const flush = (): void => {
    const first = current[0];
    const last = current[current.length - 1];
    if (first && last) {
      if (isWord(first, "DELIMITER")) {
        throw new SqlSplitError("DELIMITER is a mysql client command and is not supported", first.line);
      }
      statements.push({ text: source.slice(first.start, last.end), line: first.line, tokens: current });
    }
    current = [];
  };
  for (const token of tokens) {
    if (token.kind === "punct" && token.text === ";") flush();
    else current.push(token);
  }
  flush();
  return statements;
}
