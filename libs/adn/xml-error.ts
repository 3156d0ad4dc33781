// The one error type of XML parsing, so callers can tell a bad document from a bug.
export class XmlError extends Error {
  override name = "XmlError";
}

/** 1-based line of a position, computed only when a fault is reported. */
function lineAt(src: string, pos: number): number {
  let line = 1;
  for (let i = src.indexOf("\n"); i !== -1 && i < pos; i = src.indexOf("\n", i + 1)) line++;
  return line;
}

/** A well-formedness fault at `pos` of `src`, with the line so that a quarantined document can be fixed. */
export function notWellFormed(src: string, pos: number, problem: string): XmlError {
  return new XmlError(`XML is not well formed: ${problem} (line ${lineAt(src, pos)})`);
}
