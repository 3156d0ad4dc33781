// A MySQL tokenizer that is just precise enough for splitting migration files and for the 5.6 checker:
// it knows where strings, quoted identifiers and comments begin and end, so that neither a `;` nor a
// keyword inside them is ever mistaken for code. It does not parse expressions.

export type TokenKind =
  | "word" // unquoted identifier or keyword
  | "quoted" // `backtick identifier`; value is the unescaped name
  | "string" // '…' or "…" literal (MySQL's default mode treats "…" as a string); value is the raw body
  | "number"
  | "punct" // operators and punctuation, including ";"
  | "marker"; // the opener or closer of a /*!NNNNN … */ executable comment

export interface Token {
  kind: TokenKind;
  /** Exact source text of the token. */
  text: string;
  /** Identifier name for words and quoted identifiers, body for strings, text otherwise. */
  value: string;
  start: number;
  end: number;
  /** 1-based line of the token's first character. */
  line: number;
}

export interface LexError {
  message: string;
  line: number;
}

export interface LexResult {
  tokens: Token[];
  error?: LexError;
}

const MULTI_CHAR_PUNCT = ["->>", "<=>", "->", "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>"];

function isWordChar(ch: string): boolean {
  return /[A-Za-z0-9_$]/.test(ch) || ch.charCodeAt(0) >= 0x80;
}

function isSpace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || ch === "\f" || ch === "\v";
}

export function tokenizeSql(source: string): LexResult {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  let inExecComment = false;

  // Advances over source[pos, to) keeping the line counter right.
  const advanceTo = (to: number): void => {
    for (let i = pos; i < to; i++) if (source[i] === "\n") line++;
    pos = to;
  };
  const push = (kind: TokenKind, end: number, value?: string): void => {
    const text = source.slice(pos, end);
    tokens.push({ kind, text, value: value ?? text, start: pos, end, line });
    advanceTo(end);
  };
  const fail = (message: string, atLine: number): LexResult => ({ tokens, error: { message, line: atLine } });

  while (pos < source.length) {
    const ch = source[pos] as string;
    const next = source[pos + 1] ?? "";

    if (isSpace(ch)) {
      advanceTo(pos + 1);
      continue;
    }
    // `--` starts a comment only when followed by whitespace/control or the end: `a--1` is arithmetic.
    if (ch === "#" || (ch === "-" && next === "-" && (pos + 2 >= source.length || source.charCodeAt(pos + 2) <= 0x20))) {
      const nl = source.indexOf("\n", pos);
      advanceTo(nl === -1 ? source.length : nl);
      continue;
    }
    if (ch === "/" && next === "*") {
      if (source[pos + 2] === "!") {
        // The body of /*!50100 … */ is executed by MySQL, so it is tokenized as code.
        let end = pos + 3;
        while (end < source.length && /[0-9]/.test(source[end] as string)) end++;
        push("marker", end);
        inExecComment = true;
        continue;
      }
      const close = source.indexOf("*/", pos + 2);
      if (close === -1) return fail("unterminated /* comment", line);
      advanceTo(close + 2);
      continue;
    }
    if (inExecComment && ch === "*" && next === "/") {
      push("marker", pos + 2);
      inExecComment = false;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") {
      const startLine = line;
      let i = pos + 1;
      let body = "";
      let closed = false;
      while (i < source.length) {
        const c = source[i] as string;
        if (c === "\\" && ch !== "`") {
          body += source.slice(i, i + 2);
          i += 2;
          continue;
        }
        if (c === ch) {
          if (source[i + 1] === ch) {
            body += ch === "`" ? "`" : c + c;
            i += 2;
            continue;
          }
          closed = true;
          i++;
          break;
        }
        body += c;
        i++;
      }
      if (!closed) {
        const what = ch === "`" ? "quoted identifier" : "string literal";
        return fail(`unterminated ${what} starting here`, startLine);
      }
      push(ch === "`" ? "quoted" : "string", i, body);
      continue;
    }
    if (isWordChar(ch)) {
      let end = pos + 1;
      while (end < source.length && isWordChar(source[end] as string)) end++;
      const text = source.slice(pos, end);
      push(/^[0-9]+$/.test(text) ? "number" : "word", end);
      continue;
    }
    const multi = MULTI_CHAR_PUNCT.find((p) => source.startsWith(p, pos));
    push("punct", pos + (multi?.length ?? 1));
  }
  if (inExecComment) return fail("unterminated /*! comment", line);
  return { tokens };
}

/** Case-insensitive keyword test that never matches quoted identifiers or strings. */
export function isWord(token: Token | undefined, ...words: string[]): boolean {
  if (token === undefined || token.kind !== "word") return false;
  const upper = token.value.toUpperCase();
  return words.includes(upper);
}

export function isPunct(token: Token | undefined, text: string): boolean {
  return token !== undefined && token.kind === "punct" && token.text === text;
}
