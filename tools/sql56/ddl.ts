// Follows CREATE/ALTER/DROP/RENAME TABLE and CREATE/DROP INDEX across files, so that every index can be
// measured against the column definitions it refers to (MySQL 5.6: 767 bytes per key part, 3072 per key
// with COMPACT rows) and every table against InnoDB's worst-case row size. Best effort by design: a
// statement about a table it never saw created is skipped, never guessed at.
import { isPunct, isWord } from "../../libs/db/sql-lexer.js";
import type { Token } from "../../libs/db/sql-lexer.js";
import {
  MAX_KEY_BYTES,
  MAX_KEY_PART_BYTES,
  MAX_ROW_BYTES,
  charsetOfCollation,
  compactRowBytes,
  describeColumn,
  keyPartCost,
  normaliseType,
} from "./columns.js";
import type { ColumnModel } from "./columns.js";

export interface RuleFinding {
  line: number;
  rule: string;
  message: string;
}

export type IndexKind = "primary" | "unique" | "key" | "fulltext" | "spatial" | "foreign";

export interface KeyPart {
  column: string;
  prefix?: number;
  line: number;
}

export interface IndexModel {
  name: string;
  kind: IndexKind;
  parts: KeyPart[];
}

export interface TableModel {
  name: string;
  columns: ColumnModel[];
  defaultCharset?: string;
  indexes: IndexModel[];
}

export type Schema = Map<string, TableModel>;

export interface ColumnDefinition {
  column: ColumnModel;
  nameToken: Token;
  typeToken: Token;
  inlineIndex?: IndexKind;
  nullSpecified: boolean;
  hasDefault: boolean;
  /** First token of generated-column syntax, if any. */
  generated?: Token;
}

// ---------------------------------------------------------------------------------------------------
// token helpers

export function identName(token: Token | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (token.kind === "word" || token.kind === "quoted") return token.value;
  return undefined;
}

/** Value of a charset/collation name, which may be written as a word, `quoted` or 'string'. */
function nameValue(token: Token | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (token.kind === "word" || token.kind === "quoted" || token.kind === "string") return token.value;
  return undefined;
}

/** Index of the `)` that closes the `(` at `open`, or -1. */
export function matchParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isPunct(tokens[i], "(")) depth++;
    else if (isPunct(tokens[i], ")")) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

export function splitTopLevel(tokens: Token[]): Token[][] {
  const parts: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  for (const token of tokens) {
    if (isPunct(token, "(")) depth++;
    if (isPunct(token, ")")) depth--;
    if (depth === 0 && isPunct(token, ",")) {
      parts.push(current);
      current = [];
    } else current.push(token);
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Reads `name` or `db.name`; returns the table name (lower-cased key) and the next index. */
function readTableName(tokens: Token[], i: number): { name: string; next: number } | undefined {
  let name = identName(tokens[i]);
  if (name === undefined) return undefined;
  let next = i + 1;
  if (isPunct(tokens[next], ".") && identName(tokens[next + 1]) !== undefined) {
    name = identName(tokens[next + 1]) as string;
    next += 2;
  }
  return { name, next };
}

function skipIfExists(tokens: Token[], i: number): number {
  if (isWord(tokens[i], "IF") && isWord(tokens[i + 1], "NOT") && isWord(tokens[i + 2], "EXISTS")) return i + 3;
  if (isWord(tokens[i], "IF") && isWord(tokens[i + 1], "EXISTS")) return i + 2;
  return i;
}

/** Skips one expression operand: a literal, a word optionally called with (…), or a (…) group. */
function skipOperand(tokens: Token[], i: number): number {
  if (isPunct(tokens[i], "(")) return matchParen(tokens, i) + 1 || tokens.length;
  if (isPunct(tokens[i], "-") || isPunct(tokens[i], "+")) i++;
  const next = i + 1;
  if (isPunct(tokens[next], "(")) return matchParen(tokens, next) + 1 || tokens.length;
  if (isPunct(tokens[next], ".") && tokens[next + 1]?.kind === "number") return next + 2;
  return next;
}

// ---------------------------------------------------------------------------------------------------
// column and index definitions

const COLUMN_STOP_WORDS = new Set(["AFTER", "FIRST"]);

export function parseColumnDefinition(tokens: Token[]): ColumnDefinition | undefined {
  const nameToken = tokens[0];
  const name = identName(nameToken);
  let typeToken = tokens[1];
  if (nameToken === undefined || name === undefined || typeToken === undefined || typeToken.kind !== "word") return undefined;

  let i = 2;
  let type = normaliseType(typeToken.value);
  let charset: string | undefined;
  if (type === "NATIONAL" && tokens[2]?.kind === "word") {
    typeToken = tokens[2];
    type = normaliseType(tokens[2].value);
    charset = "utf8";
    i = 3;
  } else if (typeToken.value.toUpperCase().startsWith("N") && (type === "CHAR" || type === "VARCHAR")) {
    charset = "utf8"; // NCHAR / NVARCHAR
  }
  if (type === "CHAR" && isWord(tokens[i], "VARYING")) {
    type = "VARCHAR";
    i++;
  } else if (type === "DOUBLE" && isWord(tokens[i], "PRECISION")) i++;
  else if (type === "LONG") {
    if (isWord(tokens[i], "VARBINARY")) {
      type = "MEDIUMBLOB";
      i++;
    } else {
      if (isWord(tokens[i], "VARCHAR")) i++;
      type = "MEDIUMTEXT";
    }
  }

  const column: ColumnModel = { name, type, nullable: true };
  if (isPunct(tokens[i], "(")) {
    const close = matchParen(tokens, i);
    const args = tokens.slice(i + 1, close === -1 ? tokens.length : close);
    const numbers = args.filter((t) => t.kind === "number").map((t) => Number(t.value));
    if (type === "ENUM" || type === "SET") column.members = args.filter((t) => t.kind === "string").length;
    else {
      if (numbers[0] !== undefined) column.length = numbers[0];
      if (numbers[1] !== undefined) column.scale = numbers[1];
    }
    i = close === -1 ? tokens.length : close + 1;
  }

  const def: ColumnDefinition = { column, nameToken, typeToken, nullSpecified: false, hasDefault: false };
  while (i < tokens.length) {
    const t = tokens[i];
    if (isWord(t, "CHARACTER") && isWord(tokens[i + 1], "SET")) {
      charset = nameValue(tokens[i + 2]) ?? charset;
      i += 3;
    } else if (isWord(t, "CHARSET")) {
      charset = nameValue(tokens[i + 1]) ?? charset;
      i += 2;
    } else if (isWord(t, "COLLATE")) {
      const collation = nameValue(tokens[i + 1]);
      if (charset === undefined && collation !== undefined) charset = charsetOfCollation(collation);
      i += 2;
    } else if (isWord(t, "NOT") && isWord(tokens[i + 1], "NULL")) {
      column.nullable = false;
      def.nullSpecified = true;
      i += 2;
    } else if (isWord(t, "NULL")) {
      column.nullable = true;
      def.nullSpecified = true;
      i++;
    } else if (isWord(t, "DEFAULT")) {
      def.hasDefault = true;
      i = skipOperand(tokens, i + 1);
    } else if (isWord(t, "ON") && isWord(tokens[i + 1], "UPDATE")) {
      i = skipOperand(tokens, i + 2);
    } else if (isWord(t, "PRIMARY") && isWord(tokens[i + 1], "KEY")) {
      def.inlineIndex = "primary";
      column.nullable = false;
      i += 2;
    } else if (isWord(t, "UNIQUE")) {
      def.inlineIndex = "unique";
      i += isWord(tokens[i + 1], "KEY") ? 2 : 1;
    } else if (isWord(t, "KEY")) {
      def.inlineIndex = "primary"; // a bare KEY attribute means PRIMARY KEY
      column.nullable = false;
      i++;
    } else if (isWord(t, "GENERATED") || isWord(t, "VIRTUAL", "STORED", "PERSISTENT")) {
      def.generated ??= t;
      i++;
    } else if (isWord(t, "AS") && isPunct(tokens[i + 1], "(")) {
      def.generated ??= t;
      i = matchParen(tokens, i + 1) + 1 || tokens.length;
    } else if (isWord(t, "CHECK") && isPunct(tokens[i + 1], "(")) {
      i = matchParen(tokens, i + 1) + 1 || tokens.length;
    } else if (isWord(t, "REFERENCES") || (t !== undefined && COLUMN_STOP_WORDS.has(t.value.toUpperCase()) && t.kind === "word")) {
      break;
    } else i++;
  }
  if (charset !== undefined) column.charset = charset.toLowerCase();
  return def;
}

const INDEX_NAME_SKIP = new Set(["USING", "BTREE", "HASH", "RTREE", "IF", "NOT", "EXISTS", "INDEX", "KEY"]);

function parseKeyParts(tokens: Token[], open: number): { parts: KeyPart[]; functional?: Token; end: number } {
  const close = matchParen(tokens, open);
  const inner = tokens.slice(open + 1, close === -1 ? tokens.length : close);
  const parts: KeyPart[] = [];
  let functional: Token | undefined;
  for (const item of splitTopLevel(inner)) {
    const first = item[0];
    if (first === undefined) continue;
    if (isPunct(first, "(")) {
      functional ??= first;
      continue;
    }
    const column = identName(first);
    if (column === undefined) continue;
    const part: KeyPart = { column, line: first.line };
    if (isPunct(item[1], "(") && item[2]?.kind === "number") part.prefix = Number(item[2].value);
    parts.push(part);
  }
  return { parts, ...(functional ? { functional } : {}), end: close === -1 ? tokens.length : close + 1 };
}

export interface IndexDefinition {
  index: IndexModel;
  token: Token;
  functional?: Token;
}

/** Parses a table-level PRIMARY KEY / UNIQUE / KEY / INDEX / FULLTEXT / SPATIAL / FOREIGN KEY item. */
export function parseIndexDefinition(tokens: Token[]): IndexDefinition | undefined {
  let i = 0;
  if (isWord(tokens[i], "CONSTRAINT")) {
    i++;
    if (!isWord(tokens[i], "PRIMARY", "UNIQUE", "FOREIGN", "CHECK")) i++;
  }
  const token = tokens[i];
  if (token === undefined) return undefined;
  let kind: IndexKind;
  if (isWord(token, "PRIMARY") && isWord(tokens[i + 1], "KEY")) {
    kind = "primary";
    i += 2;
  } else if (isWord(token, "UNIQUE")) {
    kind = "unique";
    i++;
  } else if (isWord(token, "INDEX", "KEY")) {
    kind = "key";
    i++;
  } else if (isWord(token, "FULLTEXT", "SPATIAL")) {
    kind = token.value.toUpperCase() === "FULLTEXT" ? "fulltext" : "spatial";
    i++;
  } else if (isWord(token, "FOREIGN") && isWord(tokens[i + 1], "KEY")) {
    kind = "foreign";
    i += 2;
  } else return undefined;

  let name: string | undefined;
  while (i < tokens.length && !isPunct(tokens[i], "(")) {
    const t = tokens[i];
    if (t !== undefined && (t.kind === "quoted" || (t.kind === "word" && !INDEX_NAME_SKIP.has(t.value.toUpperCase())))) name ??= t.value;
    i++;
  }
  if (i >= tokens.length) return undefined;
  const { parts, functional } = parseKeyParts(tokens, i);
  const indexName = kind === "primary" ? "PRIMARY" : (name ?? parts[0]?.column ?? "?");
  return { index: { name: indexName, kind, parts }, token, ...(functional ? { functional } : {}) };
}

// ---------------------------------------------------------------------------------------------------
// measurements

function findColumn(table: TableModel, name: string): ColumnModel | undefined {
  const lower = name.toLowerCase();
  return table.columns.find((c) => c.name.toLowerCase() === lower);
}

export function checkIndex(table: TableModel, index: IndexModel, line: number): RuleFinding[] {
  if (index.kind === "fulltext" || index.kind === "spatial") return [];
  const findings: RuleFinding[] = [];
  const label = `${table.name}.${index.name}`;
  let total = 0;
  for (const part of index.parts) {
    const column = findColumn(table, part.column);
    if (!column) {
      findings.push({ line: part.line, rule: "index-column", message: `index ${label} names unknown column ${part.column}` });
      continue;
    }
    const cost = keyPartCost(column, part.prefix, table.defaultCharset);
    if (cost.problem) findings.push({ line: part.line, rule: "index-length", message: `index ${label}: ${cost.problem}` });
    if (cost.bytes > MAX_KEY_PART_BYTES) {
      const what = `${describeColumn(column, table.defaultCharset)}${part.prefix !== undefined ? ` prefix (${part.prefix})` : ""}`;
      findings.push({
        line: part.line,
        rule: "index-length",
        message: `index ${label}: column ${column.name} ${what} takes ${cost.bytes} bytes > ${MAX_KEY_PART_BYTES} (utf8mb4: VARCHAR(191) at most, or a prefix)`,
      });
    }
    total += cost.bytes;
  }
  if (total > MAX_KEY_BYTES) {
    findings.push({ line, rule: "index-length", message: `index ${label} takes ${total} bytes > ${MAX_KEY_BYTES} in total` });
  }
  return findings;
}

function checkRowSize(table: TableModel, line: number): RuleFinding[] {
  const hasPrimary = table.indexes.some((i) => i.kind === "primary");
  const bytes = compactRowBytes(table.columns, table.defaultCharset, hasPrimary);
  if (bytes < MAX_ROW_BYTES) return [];
  return [
    {
      line,
      rule: "row-size",
      message:
        `table ${table.name}: worst-case COMPACT row is ${bytes} bytes, InnoDB needs < ${MAX_ROW_BYTES} ` +
        "(InnoDB strict mode refuses it; use ascii for codes, fewer or shorter utf8mb4 VARCHARs)",
    },
  ];
}

// ---------------------------------------------------------------------------------------------------
// statements

export interface DdlResult {
  findings: RuleFinding[];
  /** Column definitions met in the statement, for the rules that look at single columns. */
  columns: ColumnDefinition[];
}

function functionalFinding(token: Token | undefined): RuleFinding[] {
  if (!token) return [];
  return [{ line: token.line, rule: "functional-index", message: "functional key parts ((expr)) need MySQL 8.0.13" }];
}

function addIndex(table: TableModel, index: IndexModel): void {
  if (index.kind === "primary") table.indexes = table.indexes.filter((i) => i.kind !== "primary");
  table.indexes.push(index);
}

function tableOptions(tokens: Token[], table: TableModel): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const eq = isPunct(tokens[i + 2], "=") ? 1 : 0;
    if (isWord(t, "CHARACTER") && isWord(tokens[i + 1], "SET")) {
      const v = nameValue(tokens[i + 2 + eq]);
      if (v) table.defaultCharset = v.toLowerCase();
    } else if (isWord(t, "CHARSET")) {
      const v = nameValue(tokens[i + 1 + (isPunct(tokens[i + 1], "=") ? 1 : 0)]);
      if (v) table.defaultCharset = v.toLowerCase();
    } else if (isWord(t, "COLLATE")) {
      const v = nameValue(tokens[i + 1 + (isPunct(tokens[i + 1], "=") ? 1 : 0)]);
      // A table COLLATE only sets the charset when none was named before it.
      if (v && table.defaultCharset === undefined) table.defaultCharset = charsetOfCollation(v);
    }
  }
}

function applyCreateTable(tokens: Token[], schema: Schema, result: DdlResult): void {
  let i = 1;
  if (isWord(tokens[i], "OR") && isWord(tokens[i + 1], "REPLACE")) i += 2;
  if (isWord(tokens[i], "TEMPORARY")) i++;
  i++; // TABLE
  const ifNotExists = isWord(tokens[i], "IF");
  i = skipIfExists(tokens, i);
  const target = readTableName(tokens, i);
  if (!target) return;
  i = target.next;
  const key = target.name.toLowerCase();
  if (ifNotExists && schema.has(key)) return;

  const likeAt = isWord(tokens[i], "LIKE") ? i + 1 : isPunct(tokens[i], "(") && isWord(tokens[i + 1], "LIKE") ? i + 2 : -1;
  if (likeAt !== -1) {
    const source = readTableName(tokens, likeAt);
    const original = source ? schema.get(source.name.toLowerCase()) : undefined;
    if (original) {
      const copy = structuredClone(original);
      copy.name = target.name;
      schema.set(key, copy);
    } else schema.delete(key);
    return;
  }
  if (!isPunct(tokens[i], "(")) {
    schema.delete(key); // CREATE TABLE … SELECT: columns unknown
    return;
  }
  const close = matchParen(tokens, i);
  const body = tokens.slice(i + 1, close === -1 ? tokens.length : close);
  const table: TableModel = { name: target.name, columns: [], indexes: [] };
  tableOptions(close === -1 ? [] : tokens.slice(close + 1), table);

  const pendingChecks: Array<{ index: IndexModel; line: number }> = [];
  for (const item of splitTopLevel(body)) {
    const first = item[0];
    if (!first) continue;
    const indexDef = parseIndexDefinition(item);
    if (indexDef) {
      addIndex(table, indexDef.index);
      pendingChecks.push({ index: indexDef.index, line: indexDef.token.line });
      result.findings.push(...functionalFinding(indexDef.functional));
      continue;
    }
    if (isWord(first, "CHECK", "CONSTRAINT", "PERIOD")) continue;
    const def = parseColumnDefinition(item);
    if (!def) continue;
    table.columns.push(def.column);
    result.columns.push(def);
    if (def.inlineIndex) {
      const index: IndexModel = {
        name: def.inlineIndex === "primary" ? "PRIMARY" : def.column.name,
        kind: def.inlineIndex,
        parts: [{ column: def.column.name, line: def.nameToken.line }],
      };
      addIndex(table, index);
      pendingChecks.push({ index, line: def.nameToken.line });
    }
  }
  // Primary-key columns are NOT NULL whatever the definition said.
  for (const part of table.indexes.find((x) => x.kind === "primary")?.parts ?? []) {
    const column = findColumn(table, part.column);
    if (column) column.nullable = false;
  }
  for (const { index, line } of pendingChecks) result.findings.push(...checkIndex(table, index, line));
  result.findings.push(...checkRowSize(table, tokens[0]?.line ?? 1));
  schema.set(key, table);
}

function replaceColumn(table: TableModel, oldName: string, column: ColumnModel): void {
  const at = table.columns.findIndex((c) => c.name.toLowerCase() === oldName.toLowerCase());
  if (at === -1) table.columns.push(column);
  else table.columns[at] = column;
  if (oldName.toLowerCase() !== column.name.toLowerCase()) {
    for (const index of table.indexes) {
      for (const part of index.parts) if (part.column.toLowerCase() === oldName.toLowerCase()) part.column = column.name;
    }
  }
}

function indexesUsing(table: TableModel, columnName: string): IndexModel[] {
  const lower = columnName.toLowerCase();
  return table.indexes.filter((i) => i.parts.some((p) => p.column.toLowerCase() === lower));
}

function applyAlterTable(tokens: Token[], schema: Schema, result: DdlResult): void {
  let i = 1;
  while (isWord(tokens[i], "ONLINE", "OFFLINE", "IGNORE")) i++;
  i++; // TABLE
  i = skipIfExists(tokens, i);
  const target = readTableName(tokens, i);
  if (!target) return;
  const table = schema.get(target.name.toLowerCase());
  const specs = splitTopLevel(tokens.slice(target.next));
  let columnsChanged = false;
  for (const spec of specs) {
    const verb = spec[0];
    if (verb === undefined) continue;
    const line = verb.line;
    let j = 1;
    if (isWord(verb, "ADD")) {
      if (isWord(spec[j], "COLUMN")) j++;
      j = skipIfExists(spec, j);
      const indexDef = parseIndexDefinition(spec.slice(j));
      if (indexDef) {
        result.findings.push(...functionalFinding(indexDef.functional));
        if (table) {
          addIndex(table, indexDef.index);
          result.findings.push(...checkIndex(table, indexDef.index, line));
        }
        continue;
      }
      if (isWord(spec[j], "CHECK") || isWord(spec[j], "CONSTRAINT")) continue;
      const groups = isPunct(spec[j], "(") ? splitTopLevel(spec.slice(j + 1, matchParen(spec, j))) : [spec.slice(j)];
      for (const group of groups) {
        const def = parseColumnDefinition(group);
        if (!def) continue;
        result.columns.push(def);
        if (!table) continue;
        replaceColumn(table, def.column.name, def.column);
        columnsChanged = true;
        if (def.inlineIndex) {
          const index: IndexModel = {
            name: def.inlineIndex === "primary" ? "PRIMARY" : def.column.name,
            kind: def.inlineIndex,
            parts: [{ column: def.column.name, line: def.nameToken.line }],
          };
          addIndex(table, index);
          result.findings.push(...checkIndex(table, index, line));
        }
      }
    } else if (isWord(verb, "MODIFY", "CHANGE")) {
      if (isWord(spec[j], "COLUMN")) j++;
      j = skipIfExists(spec, j);
      let oldName: string | undefined;
      if (isWord(verb, "CHANGE")) {
        oldName = identName(spec[j]);
        j++;
      }
      const def = parseColumnDefinition(spec.slice(j));
      if (!def) continue;
      result.columns.push(def);
      if (!table) continue;
      replaceColumn(table, oldName ?? def.column.name, def.column);
      columnsChanged = true;
      for (const index of indexesUsing(table, def.column.name)) result.findings.push(...checkIndex(table, index, line));
    } else if (isWord(verb, "DROP")) {
      if (!table) continue;
      if (isWord(spec[j], "PRIMARY") && isWord(spec[j + 1], "KEY")) {
        table.indexes = table.indexes.filter((x) => x.kind !== "primary");
      } else if (isWord(spec[j], "INDEX", "KEY")) {
        const name = identName(spec[skipIfExists(spec, j + 1)])?.toLowerCase();
        table.indexes = table.indexes.filter((x) => x.name.toLowerCase() !== name);
      } else if (isWord(spec[j], "FOREIGN", "CONSTRAINT", "CHECK")) {
      } else {
        if (isWord(spec[j], "COLUMN")) j++;
        const name = identName(spec[skipIfExists(spec, j)])?.toLowerCase();
        if (name === undefined) continue;
        table.columns = table.columns.filter((c) => c.name.toLowerCase() !== name);
        for (const index of table.indexes) index.parts = index.parts.filter((p) => p.column.toLowerCase() !== name);
        table.indexes = table.indexes.filter((x) => x.parts.length > 0);
        columnsChanged = true;
      }
    } else if (isWord(verb, "RENAME")) {
      if (!table) continue;
      if (isWord(spec[j], "COLUMN")) {
        const from = identName(spec[j + 1]);
        const to = identName(spec[j + 3]);
        const column = from ? findColumn(table, from) : undefined;
        if (column && to) replaceColumn(table, from as string, { ...column, name: to });
      } else if (isWord(spec[j], "INDEX", "KEY")) {
        const from = identName(spec[j + 1])?.toLowerCase();
        const to = identName(spec[j + 3]);
        const index = table.indexes.find((x) => x.name.toLowerCase() === from);
        if (index && to) index.name = to;
      } else {
        if (isWord(spec[j], "TO", "AS")) j++;
        const renamed = readTableName(spec, j);
        if (renamed) {
          schema.delete(target.name.toLowerCase());
          table.name = renamed.name;
          schema.set(renamed.name.toLowerCase(), table);
        }
      }
    } else if (isWord(verb, "CONVERT") && isWord(spec[1], "TO")) {
      if (!table) continue;
      const at = spec.findIndex((t, k) => (isWord(t, "SET") && isWord(spec[k - 1], "CHARACTER")) || isWord(t, "CHARSET"));
      const charset = nameValue(spec[at + 1])?.toLowerCase();
      if (at === -1 || charset === undefined) continue;
      table.defaultCharset = charset;
      for (const column of table.columns) if (column.charset !== undefined) column.charset = charset;
      for (const index of table.indexes) result.findings.push(...checkIndex(table, index, line));
      columnsChanged = true;
    } else if (table) {
      tableOptions(spec, table);
    }
  }
  if (table && columnsChanged) result.findings.push(...checkRowSize(table, tokens[0]?.line ?? 1));
}

function applyCreateIndex(tokens: Token[], schema: Schema, result: DdlResult): void {
  const on = tokens.findIndex((t) => isWord(t, "ON"));
  if (on === -1) return;
  const target = readTableName(tokens, on + 1);
  if (!target || !isPunct(tokens[target.next], "(")) return;
  const { parts, functional } = parseKeyParts(tokens, target.next);
  result.findings.push(...functionalFinding(functional));
  const table = schema.get(target.name.toLowerCase());
  if (!table) return;
  const unique = tokens.slice(0, on).some((t) => isWord(t, "UNIQUE"));
  const special = tokens.slice(0, on).find((t) => isWord(t, "FULLTEXT", "SPATIAL"));
  const indexAt = tokens.findIndex((t) => isWord(t, "INDEX"));
  const name = identName(tokens[skipIfExists(tokens, indexAt + 1)]) ?? "?";
  const kind: IndexKind = special ? (special.value.toUpperCase() === "FULLTEXT" ? "fulltext" : "spatial") : unique ? "unique" : "key";
  const index: IndexModel = { name, kind, parts };
  addIndex(table, index);
  result.findings.push(...checkIndex(table, index, tokens[0]?.line ?? 1));
}

function applyDropIndex(tokens: Token[], schema: Schema): void {
  const name = identName(tokens[skipIfExists(tokens, 2)])?.toLowerCase();
  const on = tokens.findIndex((t) => isWord(t, "ON"));
  const target = on === -1 ? undefined : readTableName(tokens, on + 1);
  const table = target ? schema.get(target.name.toLowerCase()) : undefined;
  if (table) table.indexes = table.indexes.filter((x) => x.name.toLowerCase() !== name);
}

function applyDropTable(tokens: Token[], schema: Schema): void {
  let i = 1;
  if (isWord(tokens[i], "TEMPORARY")) i++;
  i = skipIfExists(tokens, i + 1);
  for (const item of splitTopLevel(tokens.slice(i))) {
    const target = readTableName(item, 0);
    if (target) schema.delete(target.name.toLowerCase());
  }
}

function applyRenameTable(tokens: Token[], schema: Schema): void {
  for (const item of splitTopLevel(tokens.slice(2))) {
    const from = readTableName(item, 0);
    const to = from && isWord(item[from.next], "TO") ? readTableName(item, from.next + 1) : undefined;
    const table = from ? schema.get(from.name.toLowerCase()) : undefined;
    if (!from || !to || !table) continue;
    schema.delete(from.name.toLowerCase());
    table.name = to.name;
    schema.set(to.name.toLowerCase(), table);
  }
}

/** Interprets one statement's DDL against the schema, updating it; non-DDL statements are ignored. */
export function applyDdl(tokens: Token[], schema: Schema): DdlResult {
  const result: DdlResult = { findings: [], columns: [] };
  const [a, b, c, d] = tokens;
  const createTable =
    isWord(a, "CREATE") &&
    (isWord(b, "TABLE") ||
      (isWord(b, "TEMPORARY") && isWord(c, "TABLE")) ||
      (isWord(b, "OR") && isWord(c, "REPLACE") && (isWord(d, "TABLE") || (isWord(d, "TEMPORARY") && isWord(tokens[4], "TABLE")))));
  if (createTable) applyCreateTable(tokens, schema, result);
  else if (isWord(a, "ALTER") && tokens.slice(1, 4).some((t) => isWord(t, "TABLE"))) applyAlterTable(tokens, schema, result);
  else if (isWord(a, "CREATE") && tokens.slice(1, 6).some((t) => isWord(t, "INDEX"))) applyCreateIndex(tokens, schema, result);
  else if (isWord(a, "DROP") && isWord(b, "INDEX")) applyDropIndex(tokens, schema);
  else if (isWord(a, "DROP") && (isWord(b, "TABLE") || (isWord(b, "TEMPORARY") && isWord(c, "TABLE")))) applyDropTable(tokens, schema);
  else if (isWord(a, "RENAME") && isWord(b, "TABLE")) applyRenameTable(tokens, schema);
  return result;
}
