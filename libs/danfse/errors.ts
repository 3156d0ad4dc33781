// The one error of the engine: a note (or one of its events) that cannot be rendered, naming where.
export class DanfseError extends Error {
  override name = "DanfseError";
  constructor(
    /** Path of the offending element in the XML ("NFSe/infNFSe/DPS/infDPS/toma/CNPJ", "events[0]/tipo"). */
    readonly field: string,
    /** What is wrong with it, in words fit for a caller ("is not 11 digits"). */
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}
