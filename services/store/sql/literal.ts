// A value already written as SQL text: mysql2's formatter inserts what `toSqlString` returns as it is.
// The store's decode threads escape the XML there (docs/decisions/0039-xml-sent-as-text.md); a literal
// crosses to the event loop as a plain `{ sql }` object and is made a SqlLiteral again on arrival.
import { escape as escapeSql } from "mysql2";

export class SqlLiteral {
  constructor(readonly sql: string) {}
  toSqlString(): string {
    return this.sql;
  }
}

/** `text` as a quoted, escaped SQL string literal (mysql2's own escaping, backslash escapes). */
export const textLiteral = (text: string): SqlLiteral => new SqlLiteral(escapeSql(text));

/** What a SqlLiteral becomes after a structured clone (postMessage drops its class). */
export function isClonedLiteral(value: unknown): value is { sql: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof SqlLiteral) &&
    typeof (value as { sql?: unknown }).sql === "string" &&
    Object.keys(value).length === 1
  );
}
