// The one error type of XML parsing, so callers can tell a bad document from a bug.
export class XmlError extends Error {
  override name = "XmlError";
}

/** 1-based line of a position (a line ends at LF, CR LF or a lone CR), computed only when a fault is reported. */
function lineAt(src: string, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos && i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (c === 10 || (c === 13 && src.charCodeAt(i + 1) !== 10)) line++;
  }
  return line;
}

/** A well-formedness fault at `pos` of `src`, with the line so that a quarantined document can be fixed. */
export function notWellFormed(src: string, pos: number, problem: string): XmlError {
  return new XmlError(`XML is not well formed: ${problem} (line ${lineAt(src, pos)})`);
}
